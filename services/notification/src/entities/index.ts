/** The notification schema's entities; the notification issue adds its tables. */
export const NOTIFICATION_SCHEMA = 'notification';

export const notificationEntities = [];
