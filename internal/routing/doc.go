// Package routing owns the forwarding tables of a fabric's switches and
// what is computed from them: reading them, following routes, and the
// fabric-wide analyses of the diagnosis.
package routing
