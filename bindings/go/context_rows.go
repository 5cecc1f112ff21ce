package cudot

import "fmt"

// Contexts with rows (library 1.10): Options.Rows makes buffers of Rows rows of n elements each, and
// DotEachRow dots them row by row, each result with the bits of that row's own Dot, on every memory
// strategy.

// errNoContextRows answers DotEachRow on a library older than 1.10.
func errNoContextRows(op string) error {
	return &Error{Op: op, Status: StatusUnsupported,
		Message: "the loaded library has no cudot_dot_each_row (contexts with rows need 1.10)"}
}

// DotEachRow writes into results[i] the dot of the first n elements of row i of x and y, for each of the
// first rows rows (rows at most Rows, n at most the row length), as last written. Each result has the
// bits of Dot on that row's first n elements alone (a copy of them as an Array, say), whatever the
// memory strategy: on a Context of Options.Mode ModeExact that is the row's exact dot, what DotExact
// gives for it (library 1.14). rows = 0 writes nothing; n = 0 writes +0s. Errors are *Error:
// ErrInvalidArgument (rows or n negative or beyond the Context's, results shorter than rows),
// ErrUnsupported (a library older than 1.10, or an exact Context with a 1.13 library); after Close,
// ErrClosed. On any error nothing is written to results.
func (c *Context) DotEachRow(rows, n int, results []float64) error {
	const op = "DotEachRow"
	if rows < 0 || n < 0 || len(results) < rows {
		return &Error{Op: op, Status: StatusInvalidArgument,
			Message: fmt.Sprintf("rows %d and n %d must not be negative, and results (room for %d) must hold rows",
				rows, n, len(results))}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return ErrClosed
	}
	if !libHasContextRows() {
		return errNoContextRows(op)
	}
	// rows or n beyond the Context's go to the library, which says why it refuses them.
	st, msg := libDotEachRow(c.h, uint64(rows), uint64(n), results[:rows])
	return statusError(op, st, msg)
}

// RowDots returns the dot of every whole row, as a new slice of Rows results: DotEachRow(Rows, n, ...)
// with n the row length. A Context made without Options.Rows gives one result, Dot's.
func (c *Context) RowDots() ([]float64, error) {
	results := make([]float64, c.rows)
	if err := c.DotEachRow(c.rows, c.rowLen, results); err != nil {
		return nil, err
	}
	return results, nil
}

// Row returns row r of buf, a slice from one of c's input accessors (XFloat32, YInt8, Float64Inputs,
// ...): its elements r*n .. r*n+n-1 for rows of n elements, with the capacity cut at the row's end, so
// that an append cannot run into the next row. It panics, as slicing does, when r is not in
// [0, rows) or buf is shorter than c's Capacity.
func Row[E Element](c *Context, buf []E, r int) []E {
	rows, n := c.Rows()
	if r < 0 || r >= rows {
		panic(fmt.Sprintf("cudot: Row %d of a Context of %d rows", r, rows))
	}
	if len(buf) < rows*n {
		panic(fmt.Sprintf("cudot: Row of a slice of %d elements; the Context's buffers hold %d", len(buf), rows*n))
	}
	return buf[r*n : (r+1)*n : (r+1)*n]
}
