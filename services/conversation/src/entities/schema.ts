/** Shared by the conversation entities. */
export const CONVERSATION_SCHEMA = 'conversation';

export type Flat = Record<string, string | number | boolean>;
