package model

import (
	"fmt"
	"time"
)

// A Setting is one connection setting of an environment as the files write it: a
// literal, or env("NAME"), which is read from the process environment each time the
// environment is connected to. Saved plans keep the Setting, never what env() returned,
// so a secret is neither printed nor written anywhere.
type Setting struct {
	Literal string `json:"value,omitempty"`
	Env     string `json:"env,omitempty"`
}

// IsSet reports whether the files set the setting at all.
func (s Setting) IsSet() bool { return s.Literal != "" || s.Env != "" }

// Resolve returns the setting's value: the literal, or the environment variable it
// names. An env("NAME") whose variable is unset or empty is an error that names it.
func (s Setting) Resolve(getenv func(string) string) (string, error) {
	if s.Env == "" {
		return s.Literal, nil
	}
	v := getenv(s.Env)
	if v == "" {
		return "", fmt.Errorf("environment variable %s is not set (env(%q))", s.Env, s.Env)
	}
	return v, nil
}

// Connection is how to reach one environment's server: the environment block's
// connection settings, named like the global flags. It holds no secret, only where
// secrets are (environment variable names and file paths), so it may be printed and
// saved with a plan.
type Connection struct {
	Context  Setting `json:"context,omitzero"`
	Servers  Setting `json:"servers,omitzero"` // comma-separated URLs
	Creds    Setting `json:"creds,omitzero"`
	NKey     Setting `json:"nkey,omitzero"`
	User     Setting `json:"user,omitzero"`
	Password Setting `json:"password,omitzero"` // always env("NAME")
	Token    Setting `json:"token,omitzero"`    // always env("NAME")
	TLSCert  Setting `json:"tls_cert,omitzero"`
	TLSKey   Setting `json:"tls_key,omitzero"`
	TLSCA    Setting `json:"tls_ca,omitzero"`
	// TLSFirst is tls { handshake_first = true }.
	TLSFirst bool    `json:"tls_handshake_first,omitempty"`
	JSDomain Setting `json:"js_domain,omitzero"`
	// Timeout bounds connecting and each request; 0 leaves it to --timeout and
	// $NATS_TIMEOUT.
	Timeout time.Duration `json:"timeout,omitempty"`
}

// Environment is one environment "NAME" {} block: a target and the values of the
// variables there. The desired model of an environment is built with those values.
type Environment struct {
	Name       string
	Connection Connection
	// Expect is the environment's target guard, merged over the natsplan block's:
	// a field the environment sets replaces the natsplan block's. Nil when neither sets one.
	Expect *Expect
	Decl   *Decl
}
