package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/ibtool/ibtool/internal/endport"
	"github.com/ibtool/ibtool/internal/exporter"
	"github.com/ibtool/ibtool/internal/exporter/cmdline"
)

// settle applies the old names and the no- switches and checks what the
// flags cannot check themselves.
func settle(o *cmdline.Options, fs *pflag.FlagSet) error {
	if fs.Changed("listen-address") {
		if fs.Changed("web.listen-address") {
			o.Listen = append(o.Listen, o.OldListen)
		} else {
			o.Listen = []string{o.OldListen}
		}
	}
	if fs.Changed("telemetry-path") && !fs.Changed("web.telemetry-path") {
		o.Path = o.OldPath
	}
	for _, c := range cmdline.CollectorFlags {
		if off, _ := fs.GetBool("no-collector." + c.Name); off {
			*c.On(o) = false
		}
	}
	if !strings.HasPrefix(o.Path, "/") {
		return fmt.Errorf("invalid --web.telemetry-path %q: it must start with /", o.Path)
	}
	if o.Refresh <= 0 {
		return fmt.Errorf("invalid --refresh %v: it must be positive", o.Refresh)
	}
	if o.Offset < 0 || o.MaxTimeout <= 0 {
		return fmt.Errorf("invalid --scrape.timeout-offset %v or --scrape.max-timeout %v", o.Offset, o.MaxTimeout)
	}
	if o.Retries < 0 || o.Retries > 100 {
		return fmt.Errorf("invalid --retries %d: 0 to 100", o.Retries)
	}
	if o.Once && o.Textfile != "" {
		return fmt.Errorf("--once prints the scrape, --textfile writes it: give one")
	}
	if _, _, err := o.Src.Mode(); err != nil {
		return err
	}
	if o.Shard != "" {
		if _, err := exporter.ParseShard(o.Shard); err != nil {
			return err
		}
	}
	if _, err := timeoutMS(o); err != nil {
		return err
	}
	if o.MKey != "" {
		if _, err := endport.ParseUint(o.MKey, 64); err != nil {
			return fmt.Errorf("invalid M_Key %q: %v", o.MKey, err)
		}
	}
	return nil
}

// timeoutMS is -t, 1000 (libibmad's default) without it.
func timeoutMS(o *cmdline.Options) (time.Duration, error) {
	if o.Timeout == "" {
		return time.Second, nil
	}
	n, err := endport.ParseUint(o.Timeout, 31)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("invalid -t %q: a timeout in ms, a positive integer", o.Timeout)
	}
	return time.Duration(n) * time.Millisecond, nil
}
