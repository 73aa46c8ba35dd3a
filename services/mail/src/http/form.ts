/**
 * Reads an HTML form body (multipart/form-data or application/x-www-form-urlencoded), as
 * inbound-mail parsers post it: its text fields, and how many files came (their bytes are dropped).
 */
import { ApiError, type ServiceRequest } from '@collab/shared';
import busboy from 'busboy';

/** Bounds of one form: a mail's text fits; anything beyond is refused, never buffered. */
const LIMITS = { fields: 100, fieldSize: 10 * 1024 * 1024, parts: 1000 };

export function readForm(req: ServiceRequest): Promise<{ fields: Record<string, string>; files: number }> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: req.headers, defParamCharset: 'utf8', limits: LIMITS });
    } catch {
      req.resume();
      reject(new ApiError('invalid_request', 'Expected a multipart/form-data or application/x-www-form-urlencoded body.'));
      return;
    }
    const fields: Record<string, string> = {};
    let files = 0;
    let tooLarge: string | null = null;
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) tooLarge ??= name;
      fields[name] = value;
    });
    parser.on('file', (_name, stream) => {
      files++;
      stream.resume();
    });
    const refuse = () => {
      tooLarge ??= 'the form';
    };
    parser.on('fieldsLimit', refuse);
    parser.on('partsLimit', refuse);
    parser.on('error', () => reject(new ApiError('invalid_request', 'The form body is malformed.')));
    parser.on('close', () => {
      if (tooLarge !== null) reject(new ApiError('payload_too_large', `${tooLarge} is too large: at most ${LIMITS.fields} fields of ${LIMITS.fieldSize} bytes each.`));
      else resolve({ fields, files });
    });
    req.pipe(parser);
  });
}
