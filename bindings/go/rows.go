package cudot

import "fmt"

// Many dots in one call (library 1.9): rows of the caller's own memory, each with the bits of its own
// Dot, whatever the batch. In this version the CPU computes batches of host memory (Go slices, and
// page-locked memory); rows in device or managed memory are refused (ErrUnsupported).

// Mode is cudot_mode (library 1.11): how a dot is summed. DotExact, DotExactOn, TilePartialsExact and
// TilePartialsExactOn use ModeExact, DotRowsExact and DotSegmentsExact too (library 1.14), and a Context
// its Options.Mode (library 1.13); every other call of this package the canonical order.
type Mode int32

const (
	ModeCanonical Mode = 0 // cudot's canonical order: the same bits everywhere cudot runs
	ModeExact     Mode = 1 // the exact sum of the exact products, rounded once (DotExact)
)

// rowsLayout is cudot_rows_layout.
type rowsLayout int32

const (
	rowsStrided   rowsLayout = 0
	rowsSegmented rowsLayout = 1
	rowsPointers  rowsLayout = 2 // not offered here: its row pointers would be Go pointers in Go memory
)

// rowsCall is one batch, resolved for the C call: the operands of row 0 (strided) or of the long
// vectors (segmented), and the batch's shape.
type rowsCall struct {
	arraysCall
	layout                 rowsLayout
	count                  uint64
	xRowStride, yRowStride int64
	offsets                []int64
}

func errNoRows(op string) error {
	return &Error{Op: op, Status: StatusUnsupported,
		Message: "the loaded library has no cudot_dot_rows (many dots in one call need 1.9)"}
}

// checkRowsMode refuses a mode other than the canonical one on a library older than 1.14. Such a library
// has cudot_dot_rows but not cudot_rows.mode: it would refuse the field only as "bytes it does not know"
// (ErrUnsupported with a message about the struct's size), so say what is missing instead.
func checkRowsMode(op string, mode Mode) error {
	if mode == ModeCanonical {
		return nil
	}
	if v := libVersion(); v < 11400 {
		return &Error{Op: op, Status: StatusUnsupported, Message: fmt.Sprintf(
			"the loaded library, %d.%d.%d, has no modes for rows (cudot_rows.mode): mode %d needs 1.14",
			v/10000, v/100%100, v%100, int32(mode))}
	}
	return nil
}

// shifted is a's view moved by `by` elements of its memory; false where the index overflows.
func (a Array) shifted(by int) (Array, bool) {
	first := a.first + by
	if (by > 0 && first < a.first) || (by < 0 && first > a.first) {
		return a, false
	}
	a.first = first
	return a, true
}

// DotRows computes count dots in one call into results[:count]: row i is the dot of x's view moved
// by i*xRowStride elements and y's moved by i*yRowStride, so x and y are the views of row 0 (an Array
// of a slice, or its Strided view: n elements, any element stride). A row stride of 0 repeats that
// view for every row: one query against count rows of a table. Every row of a slice must lie in it.
// Each result is bit for bit Dot of that row's two views. Errors are *Error: ErrInvalidArgument
// (lengths differ, results too short, a row outside its slice), ErrUnsupported (rows in device
// memory, a library older than 1.9); nothing is written to results then.
func DotRows(x, y Array, count, xRowStride, yRowStride int, results []float64) error {
	return dotRowsIn("DotRows", ModeCanonical, x, y, count, xRowStride, yRowStride, results)
}

// DotRowsExact is DotRows in the exact mode (library 1.14, cudot_rows.mode): each result is bit for bit
// DotExact of that row's two views, the correctly rounded dot; an empty row gives +0. A library older
// than 1.14 answers ErrUnsupported, saying so; otherwise as DotRows.
func DotRowsExact(x, y Array, count, xRowStride, yRowStride int, results []float64) error {
	return dotRowsIn("DotRowsExact", ModeExact, x, y, count, xRowStride, yRowStride, results)
}

func dotRowsIn(op string, mode Mode, x, y Array, count, xRowStride, yRowStride int, results []float64) error {
	if count < 0 || len(results) < count {
		return &Error{Op: op, Status: StatusInvalidArgument,
			Message: fmt.Sprintf("count is %d and results has room for %d", count, len(results))}
	}
	c, err := prepare(op, x, y, Streams{})
	if err != nil {
		return err
	}
	// Before the shortcut below, so that an older library's answer does not depend on the shapes.
	if err := checkRowsMode(op, mode); err != nil {
		return err
	}
	c.mode = mode
	if count == 0 || x.n == 0 {
		for i := range results[:count] {
			results[i] = 0
		}
		return nil
	}
	// The batch's extremes are rows 0 and count-1: both must fit their slices (row 0 was checked).
	for _, a := range []struct {
		name   string
		view   Array
		stride int
	}{{"x", x, xRowStride}, {"y", y, yRowStride}} {
		if a.view.length < 0 {
			continue // device memory: the library checks the allocation
		}
		reach := (count - 1) * a.stride // Go's integers wrap: checked below
		last, ok := a.view.shifted(reach)
		ok = ok && (a.stride == 0 || reach/a.stride == count-1)
		if !ok || last.first < 0 || !last.fits() {
			return &Error{Op: op, Status: StatusInvalidArgument,
				Message: fmt.Sprintf("%s: the last of %d rows (row stride %d) leaves its slice of %d elements",
					a.name, count, a.stride, a.view.length)}
		}
	}
	if !libHasRows() {
		return errNoRows(op)
	}
	call := &rowsCall{arraysCall: *c, layout: rowsStrided, count: uint64(count), xRowStride: int64(xRowStride),
		yRowStride: int64(yRowStride)}
	st, msg := libDotRows(call, results)
	keepAlive(x, y)
	return statusError(op, st, msg)
}

// DotSegments computes the dots of the segments of x and y (views of the same length L) into
// results[:len(offsets)-1]: result i is the dot of their elements offsets[i] .. offsets[i+1]-1, with
// the bits of Dot on that segment alone (an empty segment gives +0). offsets must not decrease and
// lie in [0, L]. Errors as DotRows.
func DotSegments(x, y Array, offsets []int64, results []float64) error {
	return dotSegmentsIn("DotSegments", ModeCanonical, x, y, offsets, results)
}

// DotSegmentsExact is DotSegments in the exact mode (library 1.14): result i is bit for bit DotExact of
// segment i alone (+0 for an empty one). Errors as DotRowsExact.
func DotSegmentsExact(x, y Array, offsets []int64, results []float64) error {
	return dotSegmentsIn("DotSegmentsExact", ModeExact, x, y, offsets, results)
}

func dotSegmentsIn(op string, mode Mode, x, y Array, offsets []int64, results []float64) error {
	if len(offsets) == 0 || len(results) < len(offsets)-1 {
		return &Error{Op: op, Status: StatusInvalidArgument,
			Message: fmt.Sprintf("%d offsets need %d results; results has room for %d", len(offsets),
				len(offsets)-1, len(results))}
	}
	for i, o := range offsets {
		if o < 0 || o > int64(x.n) || (i > 0 && o < offsets[i-1]) {
			return &Error{Op: op, Status: StatusInvalidArgument,
				Message: fmt.Sprintf("offsets[%d] = %d: offsets must not decrease and lie in [0, %d]", i, o, x.n)}
		}
	}
	c, err := prepare(op, x, y, Streams{})
	if err != nil {
		return err
	}
	if err := checkRowsMode(op, mode); err != nil {
		return err
	}
	c.mode = mode
	count := len(offsets) - 1
	if count == 0 {
		return nil
	}
	if !libHasRows() {
		return errNoRows(op)
	}
	call := &rowsCall{arraysCall: *c, layout: rowsSegmented, count: uint64(count), offsets: offsets}
	call.n = 0 // segmented: the rows' lengths come from the offsets
	st, msg := libDotRows(call, results)
	keepAlive(x, y)
	return statusError(op, st, msg)
}
