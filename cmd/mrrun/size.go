package main

import "github.com/pgasmr/pgasmr/internal/size"

// parseSize parses a byte count such as 1GiB, 150MB, 64k, 1.5GB or 4096
// (size.Parse); sizeString prints one for people (size.String).
var (
	parseSize  = size.Parse
	sizeString = size.String
)
