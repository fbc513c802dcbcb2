/**
 * The schemas the daemon registers its own methods with (daemon-methods.ts says what they are). Only the
 * daemon loads this module: the client commands start without zod.
 */

import * as z from 'zod';
import { DAEMON_METHODS } from './daemon-methods.js';

/** `conch/status` request. */
export const StatusRequestSchema = z.object({
  method: z.literal(DAEMON_METHODS.status),
  params: z.object({}).loose().optional(),
});
/** `notifications/conch/relay`. */
export const RelayNotificationSchema = z.object({
  method: z.literal(DAEMON_METHODS.relay),
  params: z.object({}).loose().optional(),
});
