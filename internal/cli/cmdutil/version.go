package cmdutil

import (
	"fmt"

	"github.com/spf13/cobra"
)

// printVersion answers -V like the C tools: "<prog> BUILD VERSION: <ver>"
// on stderr.
func printVersion(env *Env, c *cobra.Command) error {
	_, err := fmt.Fprintf(env.IO.Err, "%s BUILD VERSION: %s (ibtool)\n", c.Name(), Version)
	return err
}
