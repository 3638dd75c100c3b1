package model_test

import (
	"bytes"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/pgasmr/pgasmr/pgas/model"
)

func sampleCalibration() *model.Calibration {
	p := model.PaperParams(64)
	p.WLocal, p.TauLocal, p.MsgLocal, p.Barrier = 2e10, 3e-8, 4e-8, 2e-6
	p.Patterns.SetCurve(model.Baseline, model.Read, model.RateCurve{{N: 256, Sec: 2e-8}, {N: 4096, Sec: 2.5e-8}})
	return &model.Calibration{
		Transport: "inproc+latency", Ranks: 4, RanksPerNode: 2,
		Machine: model.Machine{Hostname: "h1", CPU: "AMD EPYC", NumCPU: 2, GOMAXPROCS: 2, GOOS: "linux", GOARCH: "amd64", GoVersion: "go1.26"},
		Time:    time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		Options: model.CalibrateOptions{Reps: 3, PingSizes: []int{8, 64}},
		Params:  p,
		PingSameNode: []model.SizePoint{
			{Bytes: 8, Sec: 4e-8}, {Bytes: 64, Sec: 5e-8},
		},
	}
}

func TestSaveLoadRoundTrip(t *testing.T) {
	c := sampleCalibration()
	var buf bytes.Buffer
	if err := model.Save(&buf, c); err != nil {
		t.Fatal(err)
	}
	got, err := model.Load(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("Load(Save(c)) = %+v\nwant %+v", got, c)
	}
	path := filepath.Join(t.TempDir(), c.Key()+".json")
	if err := model.WriteFile(path, c); err != nil {
		t.Fatal(err)
	}
	got, err = model.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, c) {
		t.Errorf("ReadFile(WriteFile(c)) = %+v\nwant %+v", got, c)
	}
}

func TestKey(t *testing.T) {
	c := sampleCalibration()
	k := c.Key()
	if !strings.HasPrefix(k, "inproc+latency-np4-rpn2-") || strings.ContainsAny(k, "/ \\") {
		t.Errorf("Key() = %q; want a file-name-safe key starting with the transport and shape", k)
	}
	if !c.Matches(c.Transport, c.Ranks, c.RanksPerNode, c.Machine) {
		t.Error("a calibration does not match its own transport, shape and machine")
	}
	for name, change := range map[string]func(*model.Calibration){
		"transport":  func(c *model.Calibration) { c.Transport = "shm" },
		"ranks":      func(c *model.Calibration) { c.Ranks = 8 },
		"per node":   func(c *model.Calibration) { c.RanksPerNode = 1 },
		"host":       func(c *model.Calibration) { c.Machine.Hostname = "h2" },
		"cpu":        func(c *model.Calibration) { c.Machine.CPU = "Xeon" },
		"gomaxprocs": func(c *model.Calibration) { c.Machine.GOMAXPROCS = 4 },
	} {
		d := sampleCalibration()
		change(d)
		if d.Key() == k {
			t.Errorf("changing the %s keeps the key %q", name, k)
		}
	}
	same := sampleCalibration()
	same.Params.Tau = 1
	same.Time = time.Now()
	if same.Key() != k {
		t.Errorf("the key depends on measured values: %q != %q", same.Key(), k)
	}
}

func TestLoadRejects(t *testing.T) {
	var buf bytes.Buffer
	if err := model.Save(&buf, sampleCalibration()); err != nil {
		t.Fatal(err)
	}
	good := buf.String()
	for name, text := range map[string]string{
		"unknown field": strings.Replace(good, `"transport"`, `"transport_name"`, 1),
		"invalid":       strings.Replace(good, `"cache_line": 64`, `"cache_line": 0`, 1),
		"truncated":     good[:len(good)/2],
	} {
		if text == good {
			t.Fatalf("%s: the edit did not apply", name)
		}
		if _, err := model.Load(strings.NewReader(text)); err == nil {
			t.Errorf("Load accepted a calibration with %s", name)
		}
	}
	bad := sampleCalibration()
	bad.Params.Tau = math.Inf(1)
	if err := model.Save(&bytes.Buffer{}, bad); err == nil {
		t.Error("Save accepted an infinite τ")
	}
	if _, err := model.ReadFile(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("ReadFile of a missing file = nil error")
	}
}

func TestThisMachine(t *testing.T) {
	m := model.ThisMachine()
	if m.Hostname == "" || m.CPU == "" || m.GOMAXPROCS < 1 || m.NumCPU < 1 {
		t.Errorf("ThisMachine() = %+v; want host, CPU and counts", m)
	}
}
