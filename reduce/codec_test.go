package reduce

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// roundTrip encodes v after a prefix, decodes it back and checks the value,
// the byte count, that the prefix is intact and that every strict prefix of
// the encoding fails to decode (with an error, not a panic).
func roundTrip[T any](t *testing.T, c Codec[T], v T, eq func(a, b T) bool) []byte {
	t.Helper()
	prefix := []byte{0xAA, 0xBB}
	b := c.Append(append([]byte(nil), prefix...), v)
	if !bytes.Equal(b[:2], prefix) {
		t.Fatalf("%s: Append overwrote the bytes before it", c.Name())
	}
	enc := b[2:]
	if c.Fixed() > 0 && len(enc) != c.Fixed() {
		t.Fatalf("%s: encoded %d bytes, Fixed() = %d", c.Name(), len(enc), c.Fixed())
	}
	// Trailing bytes must be left alone.
	got, n, err := c.Decode(append(append([]byte(nil), enc...), 0xC1, 0xC1, 0xC1))
	if err != nil {
		t.Fatalf("%s: decode of %v: %v", c.Name(), abbrev(v), err)
	}
	if n != len(enc) {
		t.Fatalf("%s: decode used %d bytes, encoding has %d", c.Name(), n, len(enc))
	}
	if !eq(got, v) {
		t.Fatalf("%s: round trip of %v gave %v", c.Name(), abbrev(v), abbrev(got))
	}
	// Truncations: a selection of cut points (all of them for short ones).
	cuts := []int{0, 1, 2, 3, 4, 5, len(enc) / 2, len(enc) - 2, len(enc) - 1}
	if len(enc) <= 64 {
		cuts = cuts[:0]
		for i := range len(enc) {
			cuts = append(cuts, i)
		}
	}
	for _, cut := range cuts {
		if cut < 0 || cut >= len(enc) {
			continue
		}
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("%s: decode of %d of %d bytes panicked: %v", c.Name(), cut, len(enc), p)
				}
			}()
			if _, _, err := c.Decode(enc[:cut:cut]); err == nil {
				t.Fatalf("%s: decode of %d of %d bytes succeeded", c.Name(), cut, len(enc))
			}
		}()
	}
	return enc
}

func abbrev(v any) string {
	s := fmt.Sprintf("%v", v)
	if len(s) > 60 {
		return fmt.Sprintf("%.60s...(%d chars)", s, len(s))
	}
	return s
}

func eqComparable[T comparable](a, b T) bool { return a == b }

func rawRoundTrips[T comparable](t *testing.T, vs ...T) {
	t.Helper()
	c, err := RawCodec[T]()
	if err != nil {
		t.Fatal(err)
	}
	if c.Name() != "raw" {
		t.Fatalf("RawCodec name %q", c.Name())
	}
	for _, v := range vs {
		roundTrip(t, c, v, eqComparable[T])
	}
}

func TestRawCodecRoundTrip(t *testing.T) {
	rawRoundTrips[int8](t, 0, 1, -1, math.MinInt8, math.MaxInt8)
	rawRoundTrips[uint8](t, 0, 1, math.MaxUint8)
	rawRoundTrips[int16](t, 0, -2, math.MinInt16, math.MaxInt16)
	rawRoundTrips[uint16](t, 0, 7, math.MaxUint16)
	rawRoundTrips[int32](t, 0, -3, math.MinInt32, math.MaxInt32)
	rawRoundTrips[uint32](t, 0, 9, math.MaxUint32)
	rawRoundTrips[int64](t, 0, -4, math.MinInt64, math.MaxInt64)
	rawRoundTrips[uint64](t, 0, 11, math.MaxUint64)
	rawRoundTrips[float64](t, 0, -0.5, math.Pi, math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64)
	rawRoundTrips[[4]int16](t, [4]int16{}, [4]int16{1, -2, math.MaxInt16, math.MinInt16})
	type ab struct {
		A int32
		B float64
	}
	rawRoundTrips[ab](t, ab{}, ab{A: -7, B: 2.5}, ab{A: math.MaxInt32, B: math.Inf(-1)})

	// NaN: compare bit patterns.
	c, _ := RawCodec[float64]()
	nan := math.Float64frombits(0x7ff8_0000_dead_beef)
	roundTrip(t, c, nan, func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })

	// Sizes.
	for _, tc := range []struct {
		name string
		got  int
		want int
	}{
		{"int8", mustRaw[int8](t).Fixed(), 1},
		{"uint16", mustRaw[uint16](t).Fixed(), 2},
		{"int32", mustRaw[int32](t).Fixed(), 4},
		{"float64", mustRaw[float64](t).Fixed(), 8},
		{"[4]int16", mustRaw[[4]int16](t).Fixed(), 8},
		{"struct{A int32; B float64}", mustRaw[ab](t).Fixed(), 16},
	} {
		if tc.got != tc.want {
			t.Errorf("RawCodec[%s].Fixed() = %d, want %d", tc.name, tc.got, tc.want)
		}
	}
}

func mustRaw[T any](t *testing.T) Codec[T] {
	t.Helper()
	c, err := RawCodec[T]()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// testStrings crosses msgpack's fixstr / str8 / str16 / str32 boundaries.
func testStrings() []string {
	ss := []string{"", "a", "hello, world", "λόγος", "数据", "emoji 🙂 and ü", string([]byte{0xff, 0xfe, 0x00})}
	for _, n := range []int{31, 32, 255, 256, 65535, 65536, 70 << 10} {
		ss = append(ss, strings.Repeat("x", n))
	}
	// Multi-byte characters across the boundaries too.
	ss = append(ss, strings.Repeat("é", 128), strings.Repeat("数", 70<<10/3+1))
	return ss
}

func TestStringCodecRoundTrip(t *testing.T) {
	c := StringCodec()
	if c.Name() != "msgpack-string" || c.Fixed() != 0 {
		t.Fatalf("StringCodec: name %q fixed %d", c.Name(), c.Fixed())
	}
	for _, s := range testStrings() {
		enc := roundTrip(t, c, s, eqComparable[string])
		// The header grows at msgpack's boundaries.
		var hdr int
		switch n := len(s); {
		case n < 32:
			hdr = 1
		case n < 256:
			hdr = 2
		case n < 65536:
			hdr = 3
		default:
			hdr = 5
		}
		if len(enc) != len(s)+hdr {
			t.Errorf("string of %d bytes encoded in %d bytes, want %d", len(s), len(enc), len(s)+hdr)
		}
	}
}

// TestStringCodecIsMsgpack: the hand-written string codec writes the bytes
// msgpack's encoder writes, and reads what msgpack writes for strings and
// byte slices, at every header boundary.
func TestStringCodecIsMsgpack(t *testing.T) {
	c := StringCodec()
	for _, n := range []int{0, 1, 31, 32, 255, 256, 65535, 65536, 70000} {
		s := strings.Repeat("é", n/2) + strings.Repeat("x", n%2)
		want, err := msgpack.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Append([]byte{7}, s); !bytes.Equal(got[1:], want) || got[0] != 7 {
			t.Errorf("%d bytes: encoded % x..., msgpack % x...", len(s), got[1:min(len(got), 6)], want[:min(len(want), 5)])
		}
		bin, err := msgpack.Marshal([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range [][]byte{want, bin} {
			v, m, err := c.Decode(append(b, 1, 2))
			if err != nil || v != s || m != len(b) {
				t.Errorf("%d bytes: decoded %d bytes, %d used of %d, %v", len(s), len(v), m, len(b), err)
			}
		}
	}
	if _, _, err := c.Decode([]byte{0x01}); err == nil {
		t.Error("decoded a positive fixint as a string")
	}
}

func TestBytesCodecRoundTrip(t *testing.T) {
	c := BytesCodec()
	if c.Name() != "msgpack-bytes" || c.Fixed() != 0 {
		t.Fatalf("BytesCodec: name %q fixed %d", c.Name(), c.Fixed())
	}
	big := make([]byte, 70<<10)
	for i := range big {
		big[i] = byte(i * 7)
	}
	for _, b := range [][]byte{nil, {}, {0}, bytes.Repeat([]byte{1, 2, 3}, 100), big} {
		roundTrip(t, c, b, func(x, y []byte) bool { return bytes.Equal(x, y) && (x == nil) == (y == nil) })
	}
	// The decoded slice does not alias the buffer it came from.
	enc := c.Append(nil, []byte("abc"))
	got, _, err := c.Decode(enc)
	if err != nil {
		t.Fatal(err)
	}
	enc[len(enc)-1] = 'z'
	if string(got) != "abc" {
		t.Fatalf("decoded bytes alias the encoding: %q", got)
	}
}

func TestCodecFor(t *testing.T) {
	if c, err := CodecFor[int64](); err != nil || c.Name() != "raw" || c.Fixed() != 8 {
		t.Fatalf("CodecFor[int64]: %q %d %v", c.Name(), c.Fixed(), err)
	}
	type pod struct {
		A [3]uint16
		B float32
		C bool
	}
	if c, err := CodecFor[pod](); err != nil || c.Name() != "raw" {
		t.Fatalf("CodecFor[pod]: %q %v", c.Name(), err)
	}
	if c, err := CodecFor[string](); err != nil || c.Name() != "msgpack-string" {
		t.Fatalf("CodecFor[string]: %q %v", c.Name(), err)
	}
	if c, err := CodecFor[[]byte](); err != nil || c.Name() != "msgpack-bytes" {
		t.Fatalf("CodecFor[[]byte]: %q %v", c.Name(), err)
	}
	type withPtr struct {
		A int
		P *int
	}
	type hidden struct {
		A int
		b string
	}
	type withAny struct{ V any }
	for name, err := range map[string]error{
		"*int":       second(CodecFor[*int]()),
		"withPtr":    second(CodecFor[withPtr]()),
		"hidden":     second(CodecFor[hidden]()),
		"withAny":    second(CodecFor[withAny]()),
		"chan":       second(CodecFor[chan int]()),
		"[]*int":     second(CodecFor[[]*int]()),
		"map to ptr": second(CodecFor[map[string]*int]()),
	} {
		if err == nil {
			t.Errorf("CodecFor[%s] succeeded", name)
			continue
		}
		if !strings.Contains(err.Error(), "no default codec") || !strings.Contains(err.Error(), "NewCodec") {
			t.Errorf("CodecFor[%s]: unhelpful error %v", name, err)
		}
	}
	if err := second(CodecFor[withPtr]()); !strings.Contains(err.Error(), "withPtr") || !strings.Contains(err.Error(), ".P") {
		t.Errorf("CodecFor[withPtr] error does not name the type and field: %v", err)
	}
	if err := second(CodecFor[hidden]()); !strings.Contains(err.Error(), ".b is unexported") {
		t.Errorf("CodecFor[hidden] error does not name the unexported field: %v", err)
	}
	// What msgpack carries whole gets its reflection codec.
	for name, c := range map[string]string{
		"[]int":     codecName[[]int](t),
		"map":       codecName[map[int]int](t),
		"struct{}":  codecName[struct{}](t),
		"[2]string": codecName[[2]string](t),
	} {
		if c != "msgpack" {
			t.Errorf("CodecFor[%s] is %q; want msgpack", name, c)
		}
	}
	// A store of such a type without a codec fails to build, naming it.
	if _, err := NewHashStore[int, *int](KeepAll[*int]()); err == nil {
		t.Error("NewHashStore[int, *int] succeeded without a value codec")
	}
}

func second[T any](_ T, err error) error { return err }

func TestNewCodec(t *testing.T) {
	// A custom codec for a pointer type: the value pointed to, as one byte.
	c := NewCodec("ptr", 1,
		func(b []byte, v *int) []byte { return append(b, byte(*v)) },
		func(b []byte) (*int, int, error) {
			if len(b) < 1 {
				return nil, 0, fmt.Errorf("short")
			}
			v := int(b[0])
			return &v, 1, nil
		})
	if c.Name() != "ptr" || c.Fixed() != 1 {
		t.Fatalf("NewCodec: %q %d", c.Name(), c.Fixed())
	}
	v := 42
	roundTrip(t, c, &v, func(a, b *int) bool { return *a == *b })
	s, err := NewHashStore[string, *int](KeepAll[*int](), WithValueCodec[string, *int](c))
	if err != nil {
		t.Fatal(err)
	}
	if s.vc.Name() != "ptr" || s.kc.Name() != "msgpack-string" {
		t.Fatalf("store codecs %q, %q", s.kc.Name(), s.vc.Name())
	}
}

// TestCodecTruncatedHeaders decodes hand-made truncated msgpack headers.
func TestCodecTruncatedHeaders(t *testing.T) {
	cases := [][]byte{
		{},
		{0xa5, 'a', 'b'},               // fixstr 5, 2 bytes
		{0xd9},                         // str8 without length
		{0xd9, 10, 'a'},                // str8 10, 1 byte
		{0xda, 0x01},                   // str16, half a length
		{0xdb, 0x00, 0x00, 0x01},       // str32, 3/4 of a length
		{0xdb, 0xff, 0xff, 0xff, 0xff}, // str32 of 4 GiB, no body
		{0xc4, 3, 1},                   // bin8 3, 1 byte
		{0xc5, 0x10, 0x00, 1, 2},       // bin16 4096, 2 bytes
		{0x01},                         // positive fixint: not a string
		{0x90},                         // fixarray
		{0xc1},                         // never used
	}
	sc, bc := StringCodec(), BytesCodec()
	for _, b := range cases {
		for _, dec := range []func([]byte) error{
			func(b []byte) error { _, _, err := sc.Decode(b); return err },
			func(b []byte) error { _, _, err := bc.Decode(b); return err },
		} {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("decode of % x panicked: %v", b, p)
					}
				}()
				if err := dec(b); err == nil {
					t.Errorf("decode of % x succeeded", b)
				}
			}()
		}
	}
}

// TestBytesCodecHugeLengthAllocation: a corrupted bin32 header claiming
// 4 GiB makes msgpack's DecodeBytes allocate the whole length before it
// reads (readN, not the bounded readNGrow DecodeString uses), so five
// corrupt bytes in a received buffer cost a 4 GiB allocation.
func TestBytesCodecHugeLengthAllocation(t *testing.T) {
	c := BytesCodec()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := c.Decode([]byte{0xc6, 0xff, 0xff, 0xff, 0xff})
	runtime.ReadMemStats(&after)
	if err == nil {
		t.Fatal("decode succeeded")
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("decoding 5 bytes allocated %d bytes", d)
	}
}

// TestStringCodecClaimedLength: a str32 header claiming more bytes than the
// input holds makes msgpack grow the codec's decode buffer by 1 MiB before
// the read fails, and the codec keeps the grown buffer, so every further
// such record costs another MiB plus a copy of all the previous ones.
func TestStringCodecClaimedLength(t *testing.T) {
	c := StringCodec()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		if _, _, err := c.Decode([]byte{0xdb, 0xff, 0xff, 0xff, 0xff}); err == nil {
			t.Fatal("decode succeeded")
		}
	}
	runtime.ReadMemStats(&after)
	if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
		t.Fatalf("20 decodes of 5 bytes allocated %d bytes", d)
	}
}

// TestCodecSharedByStores: one Codec value given to two stores used by two
// goroutines at once is race-free, because every store takes its own
// instance of a stateful codec. Run with -race.
func TestCodecSharedByStores(t *testing.T) {
	kc, vc := StringCodec(), BytesCodec()
	var wg sync.WaitGroup
	for g := range 4 {
		s, err := NewHashStore[string, []byte](KeepAll[[]byte](), WithKeyCodec[string, []byte](kc), WithValueCodec[string, []byte](vc))
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				s.SetTag(int64(i))
				s.Emit(fmt.Sprintf("k%d-%d", g, i%17), []byte(strings.Repeat("v", i)))
			}
			kc, vc := s.KeyCodec(), s.ValueCodec()
			e := s.c.sorted()
			var b []byte
			for i, k := range e.Keys {
				for _, v := range e.Vals[e.Off[i]:e.Off[i+1]] {
					b = vc.Append(kc.Append(b, k), v)
				}
			}
			for i, k := range e.Keys {
				for _, v := range e.Vals[e.Off[i]:e.Off[i+1]] {
					dk, n, err := kc.Decode(b)
					if err != nil || dk != k {
						t.Errorf("goroutine %d: key %q decoded as %q, %v", g, k, dk, err)
						return
					}
					dv, m, err := vc.Decode(b[n:])
					if err != nil || !bytes.Equal(dv, v) {
						t.Errorf("goroutine %d: value of %q differs: %v", g, k, err)
						return
					}
					b = b[n+m:]
				}
			}
			if len(b) != 0 {
				t.Errorf("goroutine %d: %d bytes left over", g, len(b))
			}
		}()
	}
	// The shared values themselves stay usable too (their own state).
	for i := range 100 {
		b := kc.Append(nil, fmt.Sprint(i))
		if s, _, err := kc.Decode(b); err != nil || s != fmt.Sprint(i) {
			t.Fatalf("shared codec: %q %v", s, err)
		}
	}
	wg.Wait()
}

func FuzzStringCodec(f *testing.F) {
	for _, s := range testStrings()[:9] {
		f.Add(StringCodec().Append(nil, s))
	}
	f.Add([]byte{0xdb, 0xff, 0xff, 0xff, 0xff, 'a'})
	f.Add([]byte{0xc0})
	f.Add([]byte{0xc4, 2, 'h', 'i'})
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// A fresh codec per input: a shared one would accumulate the
		// buffer growth of TestStringCodecClaimedLength.
		c := StringCodec()
		// Arbitrary bytes: an error or a value, never a panic, and never a
		// count beyond the input.
		s, n, err := c.Decode(data)
		if err == nil {
			if n <= 0 || n > len(data) {
				t.Fatalf("decode of % x used %d bytes", data, n)
			}
			// Re-encoding what was decoded decodes to the same string.
			s2, _, err := c.Decode(c.Append(nil, s))
			if err != nil || s2 != s {
				t.Fatalf("re-encoding %q gave %q, %v", s, s2, err)
			}
		}
		// Any string (valid UTF-8 or not) round-trips exactly.
		str := string(data)
		enc := c.Append([]byte{1}, str)
		got, m, err := c.Decode(enc[1:])
		if err != nil || got != str || m != len(enc)-1 {
			t.Fatalf("round trip of %q: %q, %d/%d, %v", str, got, m, len(enc)-1, err)
		}
		if utf8.ValidString(str) != utf8.ValidString(got) {
			t.Fatal("validity changed")
		}
	})
}

func codecName[T any](t *testing.T) string {
	t.Helper()
	c, err := CodecFor[T]()
	if err != nil {
		t.Fatalf("CodecFor[%T]: %v", *new(T), err)
	}
	return c.Name()
}

// TestMsgpackCodec: structs of exported fields (nested slices, maps,
// arrays, named types) come back as they went, records are
// self-delimiting, every store's instance is its own (instances used at
// once from many goroutines do not mix their records), and a truncated
// or corrupt record is an error, not a panic.
func TestMsgpackCodec(t *testing.T) {
	type inner struct {
		Tags []string
		N    map[string]int
	}
	type doc struct {
		ID    uint32
		Name  string
		Score float64
		Pos   [2]int16
		In    inner
		Words []inner
	}
	c, err := CodecFor[doc]()
	if err != nil {
		t.Fatal(err)
	}
	vals := []doc{
		{},
		{ID: 7, Name: "a", Score: -1.5, Pos: [2]int16{-3, 4}, In: inner{Tags: []string{"x", ""}, N: map[string]int{"k": -9}}},
		{ID: 1 << 31, Name: strings.Repeat("long", 100), Words: []inner{{Tags: []string{"t"}}, {N: map[string]int{}}}},
	}
	var b []byte
	for _, v := range vals {
		b = c.Append(b, v)
	}
	for i, want := range vals {
		got, n, err := c.Decode(b)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if !reflect.DeepEqual(got, want) && !(i == 0 && reflect.DeepEqual(got, doc{In: inner{}})) {
			t.Fatalf("record %d: got %+v, want %+v", i, got, want)
		}
		b = b[n:]
	}
	if len(b) != 0 {
		t.Fatalf("%d bytes left over", len(b))
	}
	// Many instances at once (the in-process ranks of a job).
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ci := c.instance()
			for k := range 2000 {
				v := doc{ID: uint32(g*10000 + k), Name: fmt.Sprint(g, "-", k), In: inner{Tags: []string{fmt.Sprint(k)}}}
				got, _, err := ci.Decode(ci.Append(nil, v))
				if err != nil || !reflect.DeepEqual(got, v) {
					t.Errorf("goroutine %d record %d: %+v %v", g, k, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	whole := c.Append(nil, vals[1])
	for cut := range len(whole) {
		if _, _, err := c.Decode(whole[:cut]); err == nil {
			t.Errorf("a record cut to %d of %d bytes decoded", cut, len(whole))
		}
	}
}
