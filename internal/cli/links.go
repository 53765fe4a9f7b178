package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"
)

// newInstallLinksCmd creates one symlink per tool command pointing at this
// binary, so `perfquery ...` runs `ibtool perfquery ...`.
func newInstallLinksCmd(env *Env) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "install-links DIR",
		Short: "Create symlinks named like the infiniband-diags tools in DIR",
		Args:  cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			target, err := os.Executable()
			if err != nil {
				return fmt.Errorf("cannot find the ibtool binary: %w", err)
			}
			if target, err = filepath.EvalSymlinks(target); err != nil {
				return fmt.Errorf("cannot resolve the ibtool binary: %w", err)
			}
			return installLinks(args[0], target, linkNames(c.Root()), force, env.IO)
		},
	}
	cmd.Flags().BoolVarP(&force, "force", "f", false, "replace existing files")
	return cmd
}

func installLinks(dir, target string, names []string, force bool, io IO) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, name := range names {
		link := filepath.Join(dir, name)
		if cur, err := os.Readlink(link); err == nil && cur == target {
			continue
		}
		if force {
			_ = os.Remove(link)
		}
		if err := os.Symlink(target, link); err != nil {
			return fmt.Errorf("cannot create %s: %w (use --force to replace it)", link, err)
		}
		fmt.Fprintf(io.Out, "%s -> %s\n", link, target)
	}
	return nil
}
