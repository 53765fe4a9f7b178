package cmdutil

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/ibtool/ibtool/internal/discovery"
	"github.com/ibtool/ibtool/internal/query"
)

// DumpFabric is the fabric the forwarding-table dumps read (dump_fts,
// dump_lfts, check_lft_balance): a bad -t is process_opt's failure, a
// bad source a usage error, and a walk that fails is the C tools' "Failed
// to discover fabric" on stderr, exit 255.
func DumpFabric(env *Env, c *Common, src *query.Source) (*discovery.Fabric, error) {
	if err := CheckTimeout(c); err != nil {
		return nil, err
	}
	walker, err := OpenSourceClient(env, c, src)
	var fab *discovery.Fabric
	if err == nil {
		fab, err = src.Fabric(context.Background(), walker, query.Walk{Progress: ProgressLine(env)})
		if walker != nil {
			walker.Engine().Close()
		}
	}
	if err != nil {
		var ue *query.UsageError
		if errors.As(err, &ue) {
			return nil, UsageErrorf("%v", ue)
		}
		return nil, &ExitError{Code: ExitFailure, Err: fmt.Errorf("Failed to discover fabric: %w", err)}
	}
	return fab, nil
}

// NetdiscFailure is one of ibnetdiscover's IBEXITs. Most of its messages
// end in a newline of their own, so the C tool prints an empty line after
// the iberror line: cmsg keeps it. stderr: libibnetdisc warns there too.
func NetdiscFailure(msg string, err error, stderr bool) error {
	return &Failure{CMsg: msg + "\n", What: msg, Err: err, Stderr: stderr}
}

// CheckTimeout is ibdiag_common's check of -t, made before anything else.
func CheckTimeout(c *Common) error {
	if _, err := c.TimeoutMS(DefaultTimeoutMS); err != nil {
		return &Failure{CMsg: err.Error(), Fn: "process_opt"}
	}
	return nil
}

// FabricFrom gets a command's fabric from its source: the cache, or a
// walk on a client opened for it (with a progress line on a terminal).
// found, if set, sees every node the walk finds.
func FabricFrom(env *Env, c *Common, src *query.Source, found func(discovery.FoundEvent)) (*discovery.Fabric, error) {
	if _, _, err := src.Mode(); err != nil {
		return nil, UsageErrorf("%v", err)
	}
	client, err := OpenSourceClient(env, c, src)
	if err != nil {
		return nil, err
	}
	if client != nil {
		defer client.Engine().Close()
	}
	return src.Fabric(context.Background(), client, query.Walk{Found: found, Progress: ProgressLine(env)})
}

// NetdiscFabric is FabricFrom with ibnetdiscover's IBEXITs for a fabric
// it cannot have: libibnetdisc opens the local port itself, so a port that
// does not open is a failed discovery too.
func NetdiscFabric(env *Env, c *Common, src *query.Source, found func(discovery.FoundEvent)) (*discovery.Fabric, error) {
	fab, err := FabricFrom(env, c, src, found)
	var se *query.SourceError
	if errors.As(err, &se) && se.Op != "discover" {
		return nil, NetdiscFailure(se.Op+" failed", se.Err, false)
	}
	if errors.As(err, &se) {
		err = se.Err
	}
	if err != nil {
		return nil, discoverFailure(err)
	}
	return fab, nil
}

// discoverFailure is ibnetdiscover's "discover failed" for err; usage
// errors stay usage errors.
func discoverFailure(err error) error {
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	return NetdiscFailure("discover failed", err, true)
}

// ProgressLine returns a progress reporter drawing one status line on
// stderr when stderr is a terminal, nil otherwise.
func ProgressLine(env *Env) func(discovery.Progress) {
	fd, ok := env.IO.Err.(*os.File)
	if !ok {
		return nil
	}
	if _, err := unix.IoctlGetTermios(int(fd.Fd()), unix.TCGETS); err != nil {
		return nil
	}
	return func(p discovery.Progress) {
		if p.Done {
			fmt.Fprint(fd, "\r\033[K")
			return
		}
		fmt.Fprintf(fd, "\rdiscovering: %d nodes (%d switches), %d ports, %d MADs, %d errors\033[K",
			p.Nodes, p.Switches, p.Ports, p.MADs, p.Errors)
	}
}

// WalkIncomplete reports on stderr what the walk could not read (the
// output was printed without it), ending with a line that counts it. As
// `ibtool <cmd>` the command then exits ExitIncomplete, so that a script
// can tell; through a tool's symlink it exits 0 as the C tool does (it
// skips whatever does not answer), unless --fail-incomplete.
func WalkIncomplete(env *Env, c *Common, tool string, f *discovery.Fabric) error {
	if f == nil || len(f.Errors) == 0 {
		return nil
	}
	fmt.Fprintf(env.IO.Err, "%s: warning: %d queries failed; the output leaves out what they would have found:\n", tool, len(f.Errors))
	const shown = 10
	for i, e := range f.Errors {
		if i == shown && c.Verbose == 0 {
			fmt.Fprintf(env.IO.Err, "  ... and %d more (-v lists them all)\n", len(f.Errors)-shown)
			break
		}
		fmt.Fprintf(env.IO.Err, "  %v\n", e)
	}
	fmt.Fprintf(env.IO.Err, "%s: incomplete: %d queries failed (%s)\n", tool, len(f.Errors), countWalkErrors(f.Errors))
	if env.Compat && !c.FailIncomplete {
		return nil
	}
	return &ExitError{Code: ExitIncomplete, Err: ErrSilent}
}

// countWalkErrors counts failed queries by attribute: "3 PortInfo, 1
// NodeInfo", most first.
func countWalkErrors(errs []*discovery.WalkError) string {
	counts := map[string]int{}
	for _, e := range errs {
		attr, _, _ := strings.Cut(e.What, " ")
		counts[attr]++
	}
	attrs := make([]string, 0, len(counts))
	for a := range counts {
		attrs = append(attrs, a)
	}
	sort.Slice(attrs, func(i, j int) bool {
		if counts[attrs[i]] != counts[attrs[j]] {
			return counts[attrs[i]] > counts[attrs[j]]
		}
		return attrs[i] < attrs[j]
	})
	parts := make([]string, len(attrs))
	for i, a := range attrs {
		parts[i] = fmt.Sprintf("%d %s", counts[a], a)
	}
	return strings.Join(parts, ", ")
}
