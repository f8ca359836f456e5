package connect

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/natsplan/natsplan/internal/testsrv"
)

// pki writes a CA, a server certificate for 127.0.0.1 and a client certificate into
// dir and returns the file paths.
type pki struct{ ca, serverCert, serverKey, clientCert, clientKey string }

func newPKI(t *testing.T) pki {
	t.Helper()
	dir := t.TempDir()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test ca"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	leaf := func(name string, serial int64, usage x509.ExtKeyUsage) (string, string) {
		key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kder, err := x509.MarshalECPrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		return write(name+".pem", "CERTIFICATE", der), write(name+"-key.pem", "EC PRIVATE KEY", kder)
	}
	p := pki{ca: write("ca.pem", "CERTIFICATE", caDER)}
	p.serverCert, p.serverKey = leaf("server", 2, x509.ExtKeyUsageServerAuth)
	p.clientCert, p.clientKey = leaf("client", 3, x509.ExtKeyUsageClientAuth)
	return p
}

func TestDialTLS(t *testing.T) {
	p := newPKI(t)
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: p.serverCert, KeyFile: p.serverKey, CaFile: p.ca, Verify: true})
	if err != nil {
		t.Fatal(err)
	}
	s := testsrv.StartOptions(t, &server.Options{Host: "127.0.0.1", Port: -1, TLS: true, TLSVerify: true, TLSConfig: tc})
	url := strings.Replace(s.ClientURL(), "nats://", "tls://", 1)

	cfg := t.TempDir()
	writeContext(t, cfg, "secure", map[string]string{"url": url, "ca": p.ca, "cert": p.clientCert, "key": p.clientKey})
	tests := []struct {
		name    string
		o       Options
		wantErr string
	}{
		{name: "flags", o: Options{Server: url, TLSCA: p.ca, TLSCert: p.clientCert, TLSKey: p.clientKey}},
		{name: "context", o: Options{Context: "secure"}},
		{name: "unknown CA", o: Options{Server: url, TLSCert: p.clientCert, TLSKey: p.clientKey}, wantErr: "pass --tlsca with the CA"},
		{name: "no client certificate", o: Options{Server: url, TLSCA: p.ca}, wantErr: "pass --tlscert and --tlskey"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.o.ConfigDir, tc.o.Timeout = cfg, 2*time.Second
			nc, _, err := dial(context.Background(), tc.o)
			if tc.wantErr != "" {
				if err == nil {
					nc.Close()
					t.Fatalf("dial succeeded, want an error containing %q", tc.wantErr)
				}
				if !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error %q does not contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			defer nc.Close()
			if !nc.TLSRequired() {
				t.Errorf("connection is not TLS")
			}
			if _, err := nc.TLSConnectionState(); err != nil {
				t.Errorf("tls state: %v", err)
			}
		})
	}
}

// TestDialTLSFirst: a server configured for handshake_first is reached with --tlsfirst,
// and not without it.
func TestDialTLSFirst(t *testing.T) {
	p := newPKI(t)
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: p.serverCert, KeyFile: p.serverKey})
	if err != nil {
		t.Fatal(err)
	}
	s := testsrv.StartOptions(t, &server.Options{Host: "127.0.0.1", Port: -1, TLS: true, TLSConfig: tc, TLSHandshakeFirst: true})
	url := strings.Replace(s.ClientURL(), "nats://", "tls://", 1)
	o := Options{Server: url, TLSCA: p.ca, TLSFirst: true, ConfigDir: t.TempDir(), Timeout: 2 * time.Second}
	nc, _, err := dial(context.Background(), o)
	if err != nil {
		t.Fatalf("dial with --tlsfirst: %v", err)
	}
	nc.Close()
	o.TLSFirst, o.Timeout = false, 500*time.Millisecond
	if nc, _, err := dial(context.Background(), o); err == nil {
		nc.Close()
		t.Fatal("dial without --tlsfirst reached a handshake-first server")
	}
}
