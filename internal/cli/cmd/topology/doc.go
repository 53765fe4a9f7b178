// Package topology is the "ibtool topology" command: the fabric's switch
// hierarchy for Slurm and Graphviz.
package topology
