// Package kernels holds the four case-study kernels of seeds/002 §3.4, each
// in a "standard" version (shared temporaries, GetRange/PutRange and
// barriers, as a UPC programmer would write them with the standard
// library) and an "extended" version (the extended collectives of package
// coll), both checked against a sequential computation:
//
//   - DenseMM: C = A×B, A scattered by rows, B broadcast, C gathered.
//   - SparseMM: CSR sparse × dense, rows balanced by non-zeros.
//   - IntSort: an NPB-IS-style bucket sort, keys redistributed with
//     ExchangeVMerge.
//   - FFT3D: a 3D FFT whose transpose is Exchange or ExchangeInPlace.
//
// Inputs and outputs live in rank 0's private memory, as in the paper.
package kernels
