package cli

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
)

// newInstallLinksCmd creates one symlink per tool command pointing at this
// binary, so `perfquery ...` runs `ibtool perfquery ...`.
func newInstallLinksCmd(env *cmdutil.Env, _ string) *cobra.Command {
	var force bool
	cmd := &cobra.Command{
		Use:   "install-links DIR",
		Short: "Create symlinks named like the infiniband-diags tools in DIR",
		Long: `install-links creates one symlink per tool in DIR, pointing at this binary,
so that "perfquery ..." runs "ibtool perfquery ...". An existing file of a
tool's name (the C tool itself, say) is skipped unless --force replaces it.
Each link is reported as created, replaced or skipped.`,
		Args: cobra.ExactArgs(1),
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

// installLinks creates DIR/<name> -> target for every name, reporting
// each one on stdout: created, replaced (--force), or skipped because the
// link is already there or a file of that name is in the way (the C tools
// may be installed there). A failure to create one link is reported and
// the others are still made; the command then exits 255.
func installLinks(dir, target string, names []string, force bool, io cmdutil.IO) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	failed := 0
	for _, name := range names {
		link := filepath.Join(dir, name)
		_, err := os.Lstat(link)
		exists := err == nil
		switch cur, lerr := os.Readlink(link); {
		case lerr == nil && cur == target:
			fmt.Fprintf(io.Out, "skipped %s: already links to %s\n", link, target)
			continue
		case exists && !force:
			fmt.Fprintf(io.Out, "skipped %s: already exists (--force replaces it)\n", link)
			continue
		case exists:
			if err := os.Remove(link); err != nil {
				fmt.Fprintf(io.Err, "install-links: cannot replace %s: %v\n", link, err)
				failed++
				continue
			}
		}
		if err := os.Symlink(target, link); err != nil {
			fmt.Fprintf(io.Err, "install-links: cannot create %s: %v\n", link, err)
			failed++
			continue
		}
		verb := "created"
		if exists {
			verb = "replaced"
		}
		fmt.Fprintf(io.Out, "%s %s -> %s\n", verb, link, target)
	}
	if failed > 0 {
		return &cmdutil.ExitError{Code: cmdutil.ExitFailure, Err: fmt.Errorf("%d of %d links could not be made", failed, len(names))}
	}
	return nil
}
