// Package cmdutil is what every command shares: Env, the common flags and
// ibdiag.conf, opening the local port, resolving targets, fetching a fabric,
// the progress line, the one failure path (Fail, Failure), and Finish, which
// renders a command's result as text or JSON.
package cmdutil
