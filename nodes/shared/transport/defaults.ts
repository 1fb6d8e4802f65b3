import type { LimiterSettings } from '../limits/limiter';

/**
 * The credential's defaults. This file imports types only, so loading the credential type loads
 * neither the HTTP client nor Redis (undici, ioredis).
 */
export const DEFAULT_TIMEOUT_SECONDS = 30;
export const DEFAULT_MAX_RETRIES = 3;
export const DEFAULT_LIMITER_SETTINGS: LimiterSettings = { maxConcurrent: 10, maxPerSecond: 0 };
