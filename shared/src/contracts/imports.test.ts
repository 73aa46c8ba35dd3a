import { describe, expect, it } from 'vitest';
import { ApiError } from '../errors.js';
import { IMPORT_BATCH_ROWS, importInternal } from './imports.js';

const message = {
  originalId: '6f1c2d1e-0000-4000-8000-000000000001',
  id: 'm1',
  threadRef: '12',
  authorID: 'u1',
  type: 'user_message',
  content: [{ type: 'p', children: [{ text: 'hi' }] }],
  url: null,
  iconURL: null,
  translationKey: null,
  extraClassnames: null,
  metadata: {},
  skipLinkPreviews: false,
  createdTimestamp: '2024-01-01T00:00:00.000Z',
  updatedTimestamp: null,
  deletedTimestamp: null,
};

const check = (rows: unknown[], overwrite: unknown = false) => () => importInternal.messages.check({ overwrite, rows });
const refusal = (rows: unknown[], overwrite: unknown = false) => {
  try {
    check(rows, overwrite)();
  } catch (error) {
    return error instanceof ApiError ? error.message : error;
  }
  return 'accepted';
};

describe('the check of an import batch', () => {
  it('hands the rows on as they came, timestamps as text', () => {
    const rows = [message, { ...message, id: 'm2', content: null, metadata: null }];
    const batch = check(rows, true)();
    expect(batch.overwrite).toBe(true);
    expect(batch.rows[0]).toBe(rows[0]);
    expect(batch.rows[0].createdTimestamp).toBe('2024-01-01T00:00:00.000Z');
  });

  it('refuses a batch whose structure is not the row schema', () => {
    const { authorID: _authorID, ...withoutAuthor } = message;
    expect(refusal([withoutAuthor])).toBe('The import batch is not valid: rows/0 lacks authorID.');
    expect(refusal([message, { ...message, author: 'u1' }])).toBe('The import batch is not valid: rows/1/author is not a field of the row.');
    expect(refusal([{ ...message, skipLinkPreviews: 'no' }])).toBe('The import batch is not valid: rows/0/skipLinkPreviews must be boolean.');
    expect(refusal([{ ...message, url: 3 }])).toBe('The import batch is not valid: rows/0/url must be string or null.');
    expect(refusal([{ ...message, createdTimestamp: null }])).toBe('The import batch is not valid: rows/0/createdTimestamp must be string.');
    expect(refusal(['m1'])).toBe('The import batch is not valid: rows/0 is not an object.');
    expect(refusal([message], 'yes')).toBe('The import batch is not valid: it must be an object with overwrite and rows.');
    expect(refusal(Array.from({ length: IMPORT_BATCH_ROWS + 1 }, () => message))).toBe(`The import batch is not valid: at most ${IMPORT_BATCH_ROWS} rows.`);
  });

  it('checks integers as numbers', () => {
    const chunk = { fileID: '6f1c2d1e-0000-4000-8000-000000000002', seq: 0, data: '', last: true };
    expect(importInternal.fileChunks.check({ overwrite: false, rows: [chunk] }).rows).toEqual([chunk]);
    expect(() => importInternal.fileChunks.check({ overwrite: false, rows: [{ ...chunk, seq: '0' }] })).toThrow('rows/0/seq must be number');
  });
});
