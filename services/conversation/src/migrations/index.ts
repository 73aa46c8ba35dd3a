/** Every conversation migration, oldest first. */
export const conversationMigrations = [];
