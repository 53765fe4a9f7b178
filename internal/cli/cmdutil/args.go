package cmdutil

// Flag types and argument checks that several commands share.

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// LastString is a flag that stores its value in a variable shared with
// other flags, and marks it given, so that of -S and -G the last one given
// wins, as in the C tools.
func LastString(dst *string, given *bool) pflag.Value { return &lastStringFlag{dst, given} }

type lastStringFlag struct {
	dst *string
	set *bool
}

func (f *lastStringFlag) String() string { return "" }
func (f *lastStringFlag) Type() string   { return "port_guid" }
func (f *lastStringFlag) Set(s string) error {
	*f.dst, *f.set = s, true
	return nil
}

// AddListFlag adds a bool-like flag that stores val in a variable shared
// with other flags, so that of a group of them the last one given wins, as
// in the C tools (ibnetdiscover's -l, -H, -S and -R; iblinkinfo's
// --switches-only and --cas-only).
func AddListFlag(fs *pflag.FlagSet, dst *int, val int, name, short, usage string) {
	fl := fs.VarPF(&listFlag{dst: dst, val: val}, name, short, usage)
	fl.NoOptDefVal = "true"
}

type listFlag struct {
	dst *int
	val int
}

func (f *listFlag) String() string { return "false" }
func (f *listFlag) Type() string   { return "bool" }
func (f *listFlag) Set(s string) error {
	if s == "true" {
		*f.dst = f.val
	}
	return nil
}

// DiffCheck is --diffcheck as the C tools parse it, when it is given: a
// comma-separated list of keys (any case; empty items are skipped, like
// strtok does), each a bit of the checks, ORed into *dst.
func DiffCheck(dst *int, keys map[string]int) pflag.Value { return &diffCheckFlag{dst, keys} }

type diffCheckFlag struct {
	dst  *int
	keys map[string]int
}

func (f *diffCheckFlag) String() string { return "" }
func (f *diffCheckFlag) Type() string   { return "key(s)" }
func (f *diffCheckFlag) Set(s string) error {
	v := 0
	for _, k := range strings.Split(s, ",") {
		bit, ok := f.keys[strings.ToLower(k)]
		if !ok && k != "" {
			return fmt.Errorf("invalid diff check key: %s", k)
		}
		v |= bit
	}
	*f.dst = v
	return nil
}

// ArgsBetween is cobra.RangeArgs as a usage error (exit 2).
func ArgsBetween(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < lo || len(args) > hi {
			return UsageErrorf("accepts %d to %d arguments, received %d", lo, hi, len(args))
		}
		return nil
	}
}
