/** Every notification migration, oldest first. */
export const notificationMigrations = [];
