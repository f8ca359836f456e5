package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/spf13/cobra"

	"github.com/natsplan/natsplan/internal/subject"
	"github.com/natsplan/natsplan/model"
	"github.com/natsplan/natsplan/plan/render"
)

type partitionOptions struct {
	Subject string
	Paths   []string
	Mapping string
	Format  Format
}

// partitionResult is the JSON form of `natsplan partition`.
type partitionResult struct {
	Subject       string `json:"subject"`
	Mapping       string `json:"mapping"`
	Partition     int    `json:"partition"`
	StoredSubject string `json:"stored_subject"`
}

func newCmdPartition(f *Factory) *cobra.Command {
	o := &partitionOptions{}
	c := &cobra.Command{
		Use:   "partition SUBJECT [PATH...]",
		Short: "Print the partition a subject lands in, computed like the server",
		Long: `partition reads the files, takes the subject_mapping (--mapping, or the only one
declared), and prints the partition SUBJECT is stored in: the FNV-1a hash of the key
tokens, exactly as nats-server computes it. SUBJECT is the subject as published. With
--format json it prints the subject, the mapping, the partition and the subject the
stream stores. No server is needed.`,
		Example: `  natsplan partition orders.acme.created examples/orders
  natsplan partition orders.acme.created --mapping orders_by_customer --format json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o.Subject, o.Paths = args[0], pathsOrDefault(args[1:])
			if err := checkFormat(o.Format, formatText, formatJSON); err != nil {
				return err
			}
			return runPartition(c.Context(), f, o)
		},
	}
	envFlag(c, f)
	c.Flags().StringVar(&o.Mapping, "mapping", "", "the subject_mapping to use (required when the files declare several)")
	c.RegisterFlagCompletionFunc("mapping", completeMappings)
	formatFlag(c, &o.Format, formatText, formatJSON)
	return c
}

func runPartition(ctx context.Context, f *Factory, o *partitionOptions) error {
	if !server.IsValidLiteralSubject(o.Subject) {
		return usageErr("%q is not a subject a producer can publish: give a literal subject, without wildcards or empty tokens", o.Subject)
	}
	return f.samePerEnvironment(ctx, o.Paths, "partition of "+o.Subject, func(ef *Factory, desired *model.Model, w io.Writer) error {
		return locate(ef, desired, o, w)
	})
}

// locate prints the partition of o.Subject under desired's mapping.
func locate(f *Factory, desired *model.Model, o *partitionOptions, w io.Writer) error {
	mp, err := pickMapping(desired, o.Mapping, o.Paths)
	if err != nil {
		return err
	}
	pm, err := subject.ParseMapping(mp.Source, mp.Destination, mp.Partitions, mp.Key)
	if err != nil {
		return fmt.Errorf("subject_mapping %s (%s) is invalid: %v; run natsplan validate", mp.Name, mp.Decl, err)
	}
	if !server.SubjectMatchesFilter(o.Subject, pm.Source) {
		return fmt.Errorf("subject %q does not match the source %q of subject_mapping %s: the stream stores it "+
			"unchanged, in no partition", o.Subject, pm.Source, mp.Name)
	}
	p, stored, err := pm.Locate(o.Subject)
	if err != nil {
		return fmt.Errorf("subject_mapping %s: %w", mp.Name, err)
	}
	if st := desired.Streams[mp.Stream]; st != nil && !captured(o.Subject, st.Config) {
		fmt.Fprintf(f.IO.ErrOut, "Warning: stream %s does not capture %q (its subjects are %v): a producer's publish would not be stored.\n",
			mp.Stream, o.Subject, st.Config.Subjects)
	}
	if o.Format == formatJSON {
		return render.WriteJSON(w, partitionResult{o.Subject, mp.Name, p, stored})
	}
	_, err = fmt.Fprintln(w, p)
	return err
}

// pickMapping is the named mapping, or the only one declared.
func pickMapping(m *model.Model, name string, paths []string) (*model.SubjectMapping, error) {
	names := make([]string, 0, len(m.Mappings))
	for n := range m.Mappings {
		names = append(names, n)
	}
	sort.Strings(names)
	switch {
	case name != "":
		if mp := m.Mappings[name]; mp != nil {
			return mp, nil
		}
		if len(names) == 0 {
			return nil, fmt.Errorf("no subject_mapping %q: %s declare no subject_mapping", name, strings.Join(paths, " "))
		}
		return nil, fmt.Errorf("no subject_mapping %q in %s: use one of %s", name, strings.Join(paths, " "), strings.Join(names, ", "))
	case len(names) == 1:
		return m.Mappings[names[0]], nil
	case len(names) == 0:
		return nil, fmt.Errorf("%s declare no subject_mapping: nothing is partitioned", strings.Join(paths, " "))
	}
	return nil, usageErr("%s declare %d subject mappings (%s): choose one with --mapping", strings.Join(paths, " "),
		len(names), strings.Join(names, ", "))
}

// captured reports whether a stream with cfg stores a message published on subject.
func captured(subject string, cfg server.StreamConfig) bool {
	subjects := cfg.Subjects
	if len(subjects) == 0 && cfg.Mirror == nil && len(cfg.Sources) == 0 {
		subjects = []string{cfg.Name}
	}
	for _, s := range subjects {
		if server.SubjectMatchesFilter(subject, s) {
			return true
		}
	}
	return false
}
