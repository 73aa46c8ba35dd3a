import { useState, type ReactNode } from 'react';

/** One column: its header and how a row shows in it. */
export interface Column<T> {
  header: string;
  cell: (row: T) => ReactNode;
  /** `secret` for ids and URLs shown in monospace. */
  className?: string;
}

/** The cursor of a token-paginated list: the page shown, the next, back to the first. */
export function useCursor() {
  const [token, setToken] = useState<string | undefined>();
  return { token, next: (next: string) => setToken(next), first: () => setToken(undefined) };
}
export type Cursor = ReturnType<typeof useCursor>;

/**
 * Every table of the console: a loading line while `rows` is null, the `empty` line when there are
 * none, and with a cursor the paging of a token-paginated list (one page at a time, never all).
 */
export function DataTable<T>({
  columns,
  rows,
  rowKey,
  empty,
  caption,
  cursor,
  nextToken,
}: {
  columns: Column<T>[];
  rows: readonly T[] | null | undefined;
  rowKey: (row: T) => string;
  empty: string;
  caption?: string;
  cursor?: Cursor;
  nextToken?: string | null;
}) {
  if (!rows) return <p aria-busy="true">Loading…</p>;
  return (
    <>
      {rows.length === 0 ? (
        <p>{empty}</p>
      ) : (
        <div className="table-wrap">
          <table>
            {caption && <caption>{caption}</caption>}
            <thead>
              <tr>
                {columns.map((column) => (
                  <th key={column.header} scope="col">
                    {column.header}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={rowKey(row)}>
                  {columns.map((column) => (
                    <td key={column.header} className={column.className}>
                      {column.cell(row)}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {cursor && <Pager cursor={cursor} nextToken={nextToken} />}
    </>
  );
}

/** "First page" once past it, "Next page" while there is one. */
export function Pager({ cursor, nextToken }: { cursor: Cursor; nextToken: string | null | undefined }) {
  if (!cursor.token && !nextToken) return null;
  return (
    <div className="row">
      {cursor.token && (
        <button type="button" className="secondary outline" onClick={cursor.first}>
          First page
        </button>
      )}
      {nextToken && (
        <button type="button" className="secondary outline" onClick={() => cursor.next(nextToken)}>
          Next page
        </button>
      )}
    </div>
  );
}
