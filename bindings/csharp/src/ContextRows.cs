// ContextRows.cs - contexts with rows (library 1.10): buffers of Rows rows of RowLength elements each,
// row-major, made with the constructor's rows parameter, and DotEachRow (cudot_dot_each_row), which
// dots them row by row: each result has the bits of CudotArrays.Dot on that row alone, on every memory
// strategy. Row r is the window (r * RowLength, RowLength) of the views and leases (XAsFloat32(start,
// length), LeaseX<T>(start, length), ...).
using System;
using System.Runtime.InteropServices;

namespace Cudot
{
    public sealed partial class CudotContext
    {
        /// <summary>Rows of the buffers (cudot_get_rows): the constructor's rows, 1 for a context made
        /// without it.</summary>
        public long Rows
        {
            get { long r, n; QueryRows(out r, out n); return r; }
        }

        /// <summary>Elements of each row (cudot_get_rows): the constructor's n.</summary>
        public long RowLength
        {
            get { long r, n; QueryRows(out r, out n); return n; }
        }

        void QueryRows(out long rowCount, out long length)
        {
            using (var lease = Lease())
            {
                if (CudotLibrary.Version < 11000)
                {
                    // An older library has no cudot_get_rows, and makes one row of n (it refuses more).
                    rowCount = rows;
                    length = rowLength;
                    return;
                }
                ulong r, n;
                Check(Api.GetRows(lease.Ptr, out r, out n), lease.Ptr);
                rowCount = (long)r;
                length = (long)n;
            }
        }

        /// <summary>The dot of every whole row (cudot_dot_each_row), as a new array of Rows results; see
        /// DotEachRow(int, long, Span&lt;double&gt;).</summary>
        public double[] DotEachRow()
        {
            long r, n;
            QueryRows(out r, out n);
            if (r > int.MaxValue)
                throw new InvalidOperationException(r + " rows are more results than one array holds; use DotEachRow(rows, n, results)");
            return DotEachRow((int)r, n);
        }

        /// <summary>The dots of the first n elements of each of the first `rows` rows, as a new array of
        /// `rows` results; see DotEachRow(int, long, Span&lt;double&gt;).</summary>
        public double[] DotEachRow(int rows, long n)
        {
            if (rows < 0) throw new ArgumentOutOfRangeException("rows", rows, "row count cannot be negative");
            var results = new double[rows];
            DotEachRow(rows, n, results);
            return results;
        }

        /// <summary>results[i] = the dot of the first n elements of row i of x and y, for each of the first
        /// `rows` rows (cudot_dot_each_row, library 1.10), using what the views last wrote: each result has
        /// the bits of CudotArrays.Dot on those n elements alone, whatever the memory strategy; on an Exact
        /// context, those of CudotArrays.DotExact (library 1.14). rows = 0 writes nothing; n = 0 writes
        /// +0.0s. Throws ArgumentOutOfRangeException (rows or n negative), ArgumentException (results
        /// shorter than rows), CudotException with InvalidArgument from the library (rows beyond Rows, n
        /// beyond RowLength, results overlapping the buffers) and Unsupported (a library older than 1.10, or
        /// an Exact context with a 1.13 library). On any exception nothing was written.</summary>
        public unsafe void DotEachRow(int rows, long n, Span<double> results)
        {
            if (rows < 0) throw new ArgumentOutOfRangeException("rows", rows, "row count cannot be negative");
            if (n < 0) throw new ArgumentOutOfRangeException("n", n, "element count cannot be negative");
            if (results.Length < rows)
                throw new ArgumentException("results hold " + results.Length + " doubles, fewer than the " + rows + " rows", "results");
            using (var lease = Lease())
            {
                CudotLibrary.RequireVersion(11000, "cudot_dot_each_row");
                int status;
                fixed (double* p = &MemoryMarshal.GetReference(results))
                    status = Api.DotEachRow(lease.Ptr, (ulong)rows, (ulong)n, rows == 0 ? null : p);
                Check(status, lease.Ptr);
            }
        }
    }
}
