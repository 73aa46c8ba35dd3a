/** The conversation schema's entities; the conversation issue adds its tables. */
export const CONVERSATION_SCHEMA = 'conversation';

export const conversationEntities = [];
