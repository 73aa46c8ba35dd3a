/** A location inside a request: object keys and array indexes. */
export type Path = readonly (string | number)[];

/**
 * Formats a path the way error messages name fields:
 * object keys joined with `.` (`createThread.url`), array items with `/` (`users/3/id`).
 */
export function formatPath(path: Path): string {
  let out = '';
  path.forEach((segment, index) => {
    if (index === 0) out = String(segment);
    else if (typeof segment === 'number' || typeof path[index - 1] === 'number') out += `/${segment}`;
    else out += `.${segment}`;
  });
  return out;
}

/** `a`, `a and b`, `a, b and c` (how error messages list fields). */
export function listWords(items: readonly string[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

export function plural(count: number, singular: string, pluralForm = `${singular}s`): string {
  return count === 1 ? singular : pluralForm;
}
