package model_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pgasmr/pgasmr/pgas"
	"github.com/pgasmr/pgasmr/pgas/model"
)

// Calibrate measures the parameters on the job's own transport; a saved
// calibration is reused when its key (transport, ranks, ranks per node,
// machine) matches. (No checked output: the numbers are measurements.)
func ExampleCalibrate() {
	dir := "/tmp/pgasmr-calibrations"
	cfg := pgas.Config{Ranks: 2}
	err := pgas.Run(context.Background(), cfg, func(ctx context.Context, r *pgas.Rank) error {
		want := model.Calibration{Transport: r.TransportName(), Ranks: r.N(),
			RanksPerNode: r.Config().RanksPerNode, Machine: model.ThisMachine()}
		path := filepath.Join(dir, want.Key()+".json")
		cal, err := model.ReadFile(path) // every rank reads the same file
		if errors.Is(err, fs.ErrNotExist) {
			if cal, err = model.Calibrate(ctx, r, model.CalibrateOptions{}); err == nil && r.ID() == 0 {
				if err = os.MkdirAll(dir, 0o755); err == nil {
					err = model.WriteFile(path, cal)
				}
			}
		}
		if err != nil {
			return err
		}
		if r.ID() == 0 {
			fmt.Println(cal.Params)
		}
		return nil
	})
	if err != nil {
		fmt.Println(err)
	}
}
