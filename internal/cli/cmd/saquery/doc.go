// Package saquery is the saquery command: SA records of every type, with
// infiniband-diags' selectors and output.
package saquery
