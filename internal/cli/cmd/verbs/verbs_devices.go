package verbs

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ibtool/ibtool/internal/cli/cmdutil"
	"github.com/ibtool/ibtool/internal/jsonv"
	"github.com/ibtool/ibtool/internal/mad"
	"github.com/ibtool/ibtool/internal/verbs"
)

type ibvDevicesOptions struct {
	cmdutil.Common // only --json
}

// NewDevicesCmd builds the ibv_devices command.
func NewDevicesCmd(env *cmdutil.Env, _ string) *cobra.Command {
	opts := &ibvDevicesOptions{}
	cmd := cmdutil.ToolCommand("ibv_devices", "List RDMA devices (libibverbs) and their node GUIDs")
	cmd.Long = "ibv_devices lists the RDMA devices libibverbs sees, in rdma-core's ibv_devices format.\n" +
		"It needs libibverbs at run time (" + verbs.DefaultLibrary + ", or $" + verbs.LibraryEnv + ")."
	cmd.Flags().BoolVar(&opts.JSON, "json", false, "print the result as JSON")
	cmd.Args = func(c *cobra.Command, args []string) error {
		if len(args) > 0 {
			return cmdutil.UsageErrorf("unexpected argument %q", args[0])
		}
		return nil
	}
	cmd.RunE = func(c *cobra.Command, args []string) error {
		return runVerbs(env, func() error { return runIbvDevices(env, opts) })
	}
	return cmd
}

// VerbsDeviceJSON is one device in ibv_devices' and ibv_devinfo -l's JSON.
type VerbsDeviceJSON struct {
	Name      string         `json:"name"`
	NodeGUID  mad.GUID       `json:"node_guid"`
	NodeType  jsonv.NodeType `json:"node_type,omitempty"` // RNICs and others have none
	Transport string         `json:"transport"`
	UverbsDev string         `json:"uverbs_device"`
	SysfsPath string         `json:"sysfs_path"`
}

func VerbsDevicesJSON(devs []verbs.Device) []VerbsDeviceJSON {
	out := make([]VerbsDeviceJSON, 0, len(devs))
	for _, d := range devs {
		out = append(out, VerbsDeviceJSON{Name: d.Name, NodeGUID: mad.GUID(d.GUID),
			NodeType: jsonv.NodeTypeOf(mad.NodeType(d.NodeType)), Transport: d.Transport.String(), UverbsDev: d.DevName, SysfsPath: d.IBDevPath})
	}
	return out
}

func runIbvDevices(env *cmdutil.Env, opts *ibvDevicesOptions) error {
	devs, err := verbs.Devices()
	if err != nil {
		return err
	}
	return cmdutil.Finish(env, &opts.Common, "ibv_devices", ibvDevices(devs), nil)
}

// ibvDevices is the devices libibverbs lists: rdma-core's ibv_devices
// table as text.
type ibvDevices []verbs.Device

func (r ibvDevices) MarshalJSON() ([]byte, error) { return json.Marshal(VerbsDevicesJSON(r)) }

func (r ibvDevices) WriteText(w io.Writer) error { return cmdutil.WriteString(w, FormatIbvDevices(r)) }

// FormatIbvDevices is rdma-core's ibv_devices table.
func FormatIbvDevices(devs []verbs.Device) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    %-16s\t   node GUID\n", "device")
	fmt.Fprintf(&b, "    %-16s\t----------------\n", "------")
	for _, d := range devs {
		fmt.Fprintf(&b, "    %-16s\t%016x\n", d.Name, d.GUID)
	}
	return b.String()
}
