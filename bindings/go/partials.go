package cudot

import "fmt"

// Building blocks for a dot product over a vector that no single Context holds, e.g. one spread over
// the processes of an MPI job. cudot's canonical order cuts a vector into tiles of TileElements
// elements, computes one partial sum per tile and joins the partials in tile order, so pieces that
// start on a tile boundary can be reduced where they live and joined anywhere, with the same bits as
// one Context holding the whole vector. Needs library 1.2 (older ones answer ErrUnsupported).

const (
	// TileElements is CUDOT_TILE_ELEMENTS: element i of a vector belongs to tile i / TileElements.
	TileElements = 8192
	// PartialBytes is CUDOT_PARTIAL_BYTES, the size of one tile's partial sum.
	PartialBytes = 16
	// ExactPartialBytes is CUDOT_EXACT_PARTIAL_BYTES, the size of one exact partial: the unrounded exact
	// sum of a piece's products, which TilePartials gives for a Context in ModeExact (and
	// TilePartialsExact for Arrays), for JoinExactPartials.
	ExactPartialBytes = 1120
)

// errNoPartials answers a partials call on a library older than 1.2.
func errNoPartials(op string) error {
	return &Error{Op: op, Status: StatusUnsupported,
		Message: "the loaded library has no cudot_tile_partials/cudot_join_partials (they need 1.2)"}
}

// errNoExact answers the exact mode's partials on a library older than 1.13.
func errNoExact(op string) error {
	return &Error{Op: op, Status: StatusUnsupported,
		Message: "the loaded library has no cudot_join_exact_partials (exact partials need 1.13)"}
}

// TilePartials returns the partial sums of the tiles of elements [first, first+n) of x and y, taking
// element first as the first element of a tile: ceil(n / TileElements) partials of PartialBytes
// each, of which only the last may cover fewer than TileElements elements. Concatenated in vector
// order with those of the other pieces and passed to JoinPartials, they give the dot product of the
// whole vector, bit for bit what one Context holding it returns, provided every piece but the last
// holds a multiple of TileElements elements.
//
// The bytes are opaque: only JoinPartials with a library of the same major version, on a machine of
// the same byte order, may read them. n == 0 gives an empty slice. A range beyond Capacity (or a
// negative first or n) is ErrInvalidArgument; after Close, ErrClosed. GPU contexts compute on their
// GPU.
//
// A Context in ModeExact has no tiles: it returns one exact partial of ExactPartialBytes, the exact
// sum of the products of elements [first, first+n) (n == 0 included), whatever first and n. Exact
// partials of any pieces (any cuts, any element types) join with JoinExactPartials, in any order, to
// the correctly rounded dot of all their elements.
func (c *Context) TilePartials(first, n int) ([]byte, error) {
	const op = "TilePartials"
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h == nil {
		return nil, ErrClosed
	}
	// Checked here too, before sizing the output by n: the library would refuse it, but only after
	// the binding had allocated whatever n asked for.
	if first < 0 || n < 0 || first > c.n || n > c.n-first {
		return nil, &Error{Op: op, Status: StatusInvalidArgument,
			Message: fmt.Sprintf("elements [%d, %d + %d) are not within the capacity %d", first, first, n, c.n)}
	}
	if !libHasPartials() {
		return nil, errNoPartials(op)
	}
	size := (n + TileElements - 1) / TileElements * PartialBytes
	if c.mode == ModeExact {
		size = ExactPartialBytes // what the library writes in this mode, whatever n
	}
	out := make([]byte, size)
	if st, msg := libTilePartials(c.h, uint64(first), uint64(n), out); st != StatusOK {
		return nil, statusError(op, st, msg)
	}
	return out, nil
}

// JoinPartials returns the dot product of a vector from the partials of all its tiles, in tile order
// (the concatenated results of TilePartials over its pieces), exactly as Dot on one Context holding
// the whole vector returns it; no partials give +0. xType and yType are the element types the
// partials were computed for (the pieces' DType and YDType), with zeros meaning what they mean in
// Options: Float32 for xType, the same as xType for yType. A length that is not a multiple of
// PartialBytes, or an unknown type, is ErrInvalidArgument.
func JoinPartials(xType, yType DType, partials []byte) (float64, error) {
	const op = "JoinPartials"
	if err := Load(); err != nil {
		return 0, err
	}
	if len(partials)%PartialBytes != 0 {
		return 0, &Error{Op: op, Status: StatusInvalidArgument,
			Message: fmt.Sprintf("%d bytes of partials are not a multiple of PartialBytes (%d)", len(partials), PartialBytes)}
	}
	if !libHasPartials() {
		return 0, errNoPartials(op)
	}
	if xType == 0 {
		xType = Float32
	}
	if yType == 0 {
		yType = xType
	}
	r, st, msg := libJoinPartials(xType, yType, partials)
	if st != StatusOK {
		return 0, statusError(op, st, msg)
	}
	return r, nil
}

// JoinExactPartials returns the correctly rounded dot from exact partials placed back to back
// (ExactPartialBytes each): those of TilePartials on Contexts in ModeExact and of TilePartialsExact,
// in any order, of any element types. It is the exact sum of all their products rounded once, the bits
// DotExact (or Dot on one Context in ModeExact) gives for all their elements; no partials give +0.
// A length that is not a multiple of ExactPartialBytes, or bytes that are not an exact partial of a
// library of this major version, is ErrInvalidArgument (the library's message names the partial's
// index). Needs library 1.13 (older ones answer ErrUnsupported).
func JoinExactPartials(partials []byte) (float64, error) {
	const op = "JoinExactPartials"
	if err := Load(); err != nil {
		return 0, err
	}
	if len(partials)%ExactPartialBytes != 0 {
		return 0, &Error{Op: op, Status: StatusInvalidArgument,
			Message: fmt.Sprintf("%d bytes of partials are not a multiple of ExactPartialBytes (%d)", len(partials),
				ExactPartialBytes)}
	}
	if !libHasExact() {
		return 0, errNoExact(op)
	}
	r, st, msg := libJoinExactPartials(partials)
	if st != StatusOK {
		return 0, statusError(op, st, msg)
	}
	return r, nil
}
