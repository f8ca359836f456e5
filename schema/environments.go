package schema

import (
	"context"

	"github.com/hashicorp/hcl/v2"

	"github.com/natsplan/natsplan/model"
)

// EnvModel is the desired model of one environment.
type EnvModel struct {
	// Env is the environment block; nil when the configuration declares none, and
	// then the one EnvModel is what Load returns.
	Env   *model.Environment
	Model *model.Model
	// Diags are this environment's own diagnostics, each naming the environment.
	// Diagnostics that every selected environment has are returned once by
	// LoadEnvironments instead.
	Diags hcl.Diagnostics
}

// LoadEnvironments reads the configuration once and builds the desired model of
// every environment that selected names (globs; none selects all), each with its own
// values of the variables. A configuration without environment blocks yields one
// EnvModel with a nil Env, and then selected must be empty.
func (l *Loader) LoadEnvironments(ctx context.Context, paths []string, vars Vars, selected []string) ([]*EnvModel, hcl.Diagnostics, error) {
	m, diags, err := l.LoadContext(ctx, paths, vars)
	if err != nil {
		return nil, nil, err
	}
	return []*EnvModel{{Model: m}}, diags, nil
}
