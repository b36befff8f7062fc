package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"inferno/backend/cuda"
	"inferno/backend/vulkan"
)

// devicesCmd lists the GPUs the backends see: CUDA's and Vulkan's, with
// what the Vulkan backend needs of each (--device picks one by number).
func devicesCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "devices",
		Short: "List the GPUs the cuda and vulkan backends can run on",
		Long: `List the GPUs the cuda and vulkan backends can run on.

Each Vulkan device is listed with its number (what --device takes), its
type, the driver's Vulkan version, its memory, subgroup size and shared
memory, and the features the shaders use where it has them (fp16, int8,
int-dot: 8-bit integer dot products, coop-matrix: cooperative matrices).
A device that lacks what the backend needs says what.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			w := cmd.OutOrStdout()
			if err := cuda.Available(); err != nil {
				fmt.Fprintf(w, "cuda: none (%v)\n", err)
			} else {
				v, _ := cuda.DriverVersion()
				for i := 0; ; i++ {
					n, err := cuda.TotalMemory(i)
					if err != nil {
						break
					}
					name, _ := cuda.DeviceName(i)
					fmt.Fprintf(w, "cuda %d: %s, %.1f GiB, driver CUDA %d.%d\n", i, name, float64(n)/(1<<30), v/1000, v%1000/10)
				}
			}
			ds, err := vulkan.Devices()
			if err != nil {
				fmt.Fprintf(w, "vulkan: none (%v)\n", err)
				return nil
			}
			if len(ds) == 0 {
				fmt.Fprintln(w, "vulkan: the loader lists no device")
			}
			for _, d := range ds {
				fmt.Fprintln(w, d.String())
			}
			return nil
		},
	}
}
