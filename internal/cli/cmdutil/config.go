package cmdutil

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"
)

// DefaultConfigPath is infiniband-diags' ibdiag.conf.
const DefaultConfigPath = "/etc/infiniband-diags/ibdiag.conf"

// diagConfig is what ibdiag.conf can set.
type diagConfig struct {
	CA, Port, Timeout, MKey, SAKey string
	Retries                        string // ibtool's own key: the C tools ignore it
	MlxEPI                         bool
}

// readDiagConfig parses ibdiag.conf as ibdiag_common.c does: key=value
// lines, '#' in column 0 starts a comment, no whitespace trimming, and keys
// matched by prefix ("CA", "Port", "timeout", "MLX_EPI", "m_key",
// "sa_key"). A missing file is ignored, -z or not, as the C tools do.
func readDiagConfig(path string) (diagConfig, error) {
	cfg := diagConfig{MlxEPI: true}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return cfg, nil
		}
		return cfg, fmt.Errorf("cannot read config file %q: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch {
		case strings.HasPrefix(key, "CA"):
			cfg.CA = val
		case strings.HasPrefix(key, "Port"):
			cfg.Port = val
		case strings.HasPrefix(key, "timeout"):
			cfg.Timeout = val
		case strings.HasPrefix(key, "retries"):
			cfg.Retries = val
		case strings.HasPrefix(key, "MLX_EPI"):
			cfg.MlxEPI = val == "true" || val == "TRUE"
		case strings.HasPrefix(key, "m_key"):
			cfg.MKey = val
		case strings.HasPrefix(key, "sa_key"):
			cfg.SAKey = val
		}
	}
	if err := sc.Err(); err != nil {
		return cfg, fmt.Errorf("cannot read config file %q: %w", path, err)
	}
	return cfg, nil
}

// ApplyDiagConfig fills the common options from ibdiag.conf (-z, or the
// default file) where the command line left them unset. Unlike the C tools,
// which read -z at its place in argv, options given on the command line
// always win, wherever -z stands.
func ApplyDiagConfig(fs *pflag.FlagSet, c *Common) error {
	path := c.Config
	if path == "" {
		path = DefaultConfigPath
	}
	cfg, err := readDiagConfig(path)
	if err != nil {
		return err
	}
	fill := func(flag string, dst *string, val string) {
		if val != "" && fs.Lookup(flag) != nil && !fs.Changed(flag) {
			*dst = val
		}
	}
	fill("Ca", &c.CA, cfg.CA)
	fill("Port", &c.Port, cfg.Port)
	fill("timeout", &c.Timeout, cfg.Timeout)
	fill("retries", &c.Retries, cfg.Retries)
	fill("m_key", &c.MKey, cfg.MKey)
	c.SAKey = cfg.SAKey
	c.MlxEPI = cfg.MlxEPI
	return nil
}
