module github.com/pgasmr/pgasmr

go 1.26
