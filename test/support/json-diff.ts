/** Field-by-field differences between two JSON values, each named by its JSON path. */
export interface JsonDifference {
  path: string;
  expected: unknown;
  actual: unknown;
}

const MISSING = Symbol('missing');

export function jsonDifferences(expected: unknown, actual: unknown, path = ''): JsonDifference[] {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const differences: JsonDifference[] = [];
    for (let i = 0; i < Math.max(expected.length, actual.length); i++)
      differences.push(...jsonDifferences(i < expected.length ? expected[i] : MISSING, i < actual.length ? actual[i] : MISSING, `${path}/${i}`));
    return differences;
  }
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
  if (isObject(expected) && isObject(actual)) {
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])];
    return keys.flatMap((key) =>
      jsonDifferences(key in expected ? expected[key] : MISSING, key in actual ? actual[key] : MISSING, `${path}/${key}`),
    );
  }
  if (Object.is(expected, actual)) return [];
  return [{ path, expected: expected === MISSING ? '(absent)' : expected, actual: actual === MISSING ? '(absent)' : actual }];
}
