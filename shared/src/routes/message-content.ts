/**
 * Message content: an array of nodes of eleven kinds. Validated in two steps:
 * the shape of each node (keys and types, with path-named errors) as part of
 * the request schema, then the structure (which node may contain which), whose failure names the
 * whole content. The structural check is a separate step because it comes later in the order of
 * checks: after the thread, message, id and author checks.
 */
import { ApiError } from '../errors.js';
import { formatPath, type Path } from '../schema/path.js';
import { s } from '../schema/builders.js';
import { isPlainObject, ObjectSchema, type Shape } from '../schema/object-schemas.js';
import { invalidField, Schema, type JsonSchema } from '../schema/schema.js';

export interface MessageNode {
  type?: string;
  text?: string;
  children?: MessageNode[];
  user?: { id: string };
  [key: string]: unknown;
}

export const NODE_TYPES = [
  'p',
  'mention',
  'assignee',
  'link',
  'bullet',
  'number_bullet',
  'quote',
  'code',
  'todo',
  'markdown',
] as const;
type NodeType = (typeof NODE_TYPES)[number];

class NodeSchema extends Schema<MessageNode> {
  readonly expected = 'message content node';
  private readonly shapes: Record<NodeType | 'text', ObjectSchema<Shape>>;

  constructor() {
    super();
    const children = s.array(this);
    const className = s.string().optional();
    const user = s.object({ id: s.string() });
    const withChildren = (extra: Shape = {}) => s.object({ type: s.string(), children, class: className, ...extra });
    this.shapes = {
      text: s.object({
        text: s.string(),
        bold: s.boolean().optional(),
        italic: s.boolean().optional(),
        underline: s.boolean().optional(),
        code: s.boolean().optional(),
        class: className,
      }),
      p: withChildren(),
      mention: withChildren({ user }),
      // `class` passes the shape check but not the structural one.
      assignee: s.object({ type: s.string(), user, children, class: className }),
      link: withChildren({ url: s.string() }),
      bullet: withChildren({ indent: s.number().optional() }),
      number_bullet: withChildren({ bulletNumber: s.number(), indent: s.number().optional() }),
      quote: withChildren(),
      code: withChildren(),
      todo: withChildren({ todoID: s.string(), done: s.boolean() }),
      markdown: s.object({ type: s.string(), children, class: className }),
    };
  }

  parse(value: unknown, path: Path = []): MessageNode {
    if (!isPlainObject(value)) this.invalid(path);
    if (!('type' in value)) return this.shapes.text.parse(value, path) as MessageNode;
    const type = value.type;
    if (typeof type !== 'string' || !(NODE_TYPES as readonly string[]).includes(type))
      throw invalidField([...path, 'type'], `one of ${NODE_TYPES.join(', ')} (or no type for a text node)`);
    return this.shapes[type as NodeType].parse(value, path) as MessageNode;
  }

  private describing = false;

  /** The node schema contains itself (`children`): nested occurrences are a `$ref` to it. */
  override jsonSchema(): JsonSchema {
    if (this.describing) return { $ref: '#/components/schemas/MessageNode' };
    this.describing = true;
    try {
      return super.jsonSchema();
    } finally {
      this.describing = false;
    }
  }

  protected baseJsonSchema(): JsonSchema {
    return {
      oneOf: Object.entries(this.shapes).map(([type, shape]) => {
        const schema = shape.jsonSchema() as { properties: Record<string, JsonSchema> };
        const properties = { ...schema.properties };
        if (type !== 'text') properties.type = { const: type };
        return { ...schema, properties, title: type === 'text' ? 'MessageTextNode' : `Message ${type} node` };
      }),
    };
  }
}

const INLINE = new Set(['text', 'mention', 'assignee', 'link']);
const TOP_LEVEL = new Set(['p', 'quote', 'code', 'bullet', 'number_bullet', 'link', 'mention', 'assignee', 'markdown', 'todo']);
const QUOTE_CHILDREN = new Set(['p', 'bullet', 'number_bullet', 'text', 'mention', 'assignee', 'link']);

const kind = (node: MessageNode) => node.type ?? 'text';

function isPrefixedTextOnly(node: MessageNode | undefined, prefix: string): boolean {
  return (
    node !== undefined &&
    Object.keys(node).length === 1 &&
    typeof node.text === 'string' &&
    node.text.startsWith(prefix) &&
    node.text.length > prefix.length
  );
}

/** Whether a node may appear where it is, recursively (the structural check). */
function isWellFormed(node: MessageNode): boolean {
  const children = node.children ?? [];
  const all = (allowed: Set<string>) => children.every((child) => allowed.has(kind(child)) && isWellFormed(child));
  switch (kind(node)) {
    case 'text':
      return true;
    case 'p':
      return children.length >= 1 && all(INLINE);
    case 'quote':
      return children.length >= 1 && all(QUOTE_CHILDREN);
    case 'bullet':
    case 'number_bullet': {
      const indentOk = node.indent === undefined || (Number.isInteger(node.indent) && (node.indent as number) >= 0 && (node.indent as number) <= 4);
      const numberOk = node.type === 'bullet' || Number.isInteger(node.bulletNumber);
      return indentOk && numberOk && children.length >= 1 && all(new Set(['p']));
    }
    case 'code':
      return children.length >= 1 && all(new Set(['text']));
    case 'link':
      return all(new Set(['text', 'mention']));
    case 'mention':
      return children.length === 1 && isPrefixedTextOnly(children[0], '@');
    case 'assignee':
      return node.class === undefined && children.length === 1 && isPrefixedTextOnly(children[0], '+');
    case 'markdown':
      return node.class === undefined && children.length === 1 && isWellFormed(children[0]);
    case 'todo':
      return all(new Set([...INLINE, 'p']));
    default:
      return false;
  }
}

export class MessageContentSchema extends Schema<MessageNode[]> {
  readonly expected = 'array of message content nodes';
  private readonly nodes = s.array(new NodeSchema());

  /** The shape of every node; the structure is checked later by `checkContentStructure`. */
  parse(value: unknown, path: Path = []): MessageNode[] {
    return this.nodes.parse(value, path);
  }

  protected baseJsonSchema(): JsonSchema {
    return { type: 'array', items: { $ref: '#/components/schemas/MessageNode' } };
  }

  /** The node schema, registered once in the OpenAPI components as `MessageNode`. */
  static nodeJsonSchema(): JsonSchema {
    return new NodeSchema().jsonSchema();
  }
}

/**
 * The structural content check: which node may appear where. Content that
 * passed `MessageContentSchema` but is not well formed → `400 invalid_field` naming the content.
 */
export function checkContentStructure(content: readonly MessageNode[], path: Path = ['content']): void {
  if (!content.every((node) => TOP_LEVEL.has(kind(node)) && isWellFormed(node)))
    throw new ApiError(
      'invalid_field',
      `${formatPath(path)} field is invalid: Message contents contained invalid element(s): ${JSON.stringify(content)}`,
    );
}

/** Plain text of content. */
export function plaintextOf(content: readonly MessageNode[]): string {
  const textOf = (node: MessageNode): string =>
    node.type === undefined && typeof node.text === 'string' ? node.text : (node.children ?? []).map(textOf).join('');
  return content.map(textOf).join('\n').trim();
}

/** User ids of every mention node, in order of appearance, without duplicates. */
export function mentionedUserIds(content: readonly MessageNode[]): string[] {
  const ids: string[] = [];
  const visit = (node: MessageNode) => {
    if (node.type === 'mention' && node.user) ids.push(node.user.id);
    node.children?.forEach(visit);
  };
  content.forEach(visit);
  return [...new Set(ids)];
}
