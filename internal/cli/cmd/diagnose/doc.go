// Package diagnose is the "ibtool diagnose" command: one sweep of the
// fabric judged by internal/diagnose's checks, shown as text, JSON or an
// HTML page (internal/diagnose/report). An ibtool command of its own, no
// C counterpart.
package diagnose
