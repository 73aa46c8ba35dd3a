/**
 * A string that only some code may produce: `Brand<'ThreadRef'>` can be used wherever a string
 * is expected, but a plain string cannot be passed where a `Brand<'ThreadRef'>` is expected. A
 * service types its internal row ids so, and only its repositories' tenant-scoped reads return
 * them, so that a query by internal id cannot be given an id that did not come from a lookup
 * within the application.
 */
export type Brand<Name extends string> = string & { readonly __brand: Name };
