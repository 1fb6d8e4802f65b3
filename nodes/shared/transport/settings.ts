import type { ICredentialDataDecryptedObject } from 'n8n-workflow';

import { accountNameOf } from '../gateway/accountScope';
import type { LimiterSettings } from '../limits/limiter';
import type { MoneyLimits } from '../money/ledger';
import { redisSettingsFromCredentials } from '../store/redis/settings';
import { DEFAULT_LIMITER_SETTINGS, DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_SECONDS } from './defaults';

export type AppCodePlacement = 'query' | 'header';

export interface GatewaySettings {
	baseUrl: string;
	appCode: string;
	/** The credential's Account (gateway/accountScope.ts accountNameOf): '' or absent when not set. */
	accountName?: string;
	appCodePlacement: AppCodePlacement;
	timeoutMs: number;
	/** Extra attempts after the first, for idempotent operations only. */
	maxRetries: number;
	limiter: LimiterSettings;
	/** The cap and the account's budgets per China day and month, in yuan; 0 means none. */
	money: MoneyLimits;
}

function positiveNumber(value: unknown, fallback: number): number {
	const number = Number(value);
	return Number.isFinite(number) && number >= 0 ? number : fallback;
}

/** Reads the credential's fields; the credential type defines them and their defaults. */
export function settingsFromCredentials(credentials: ICredentialDataDecryptedObject): GatewaySettings {
	const timeoutMs = positiveNumber(credentials.timeoutSeconds, DEFAULT_TIMEOUT_SECONDS) * 1000 || DEFAULT_TIMEOUT_SECONDS * 1000;
	return {
		baseUrl: String(credentials.baseUrl ?? '').trim().replace(/\/+$/, ''),
		appCode: String(credentials.appCodeSecret ?? '').trim(),
		accountName: accountNameOf(credentials.account),
		appCodePlacement: credentials.appCodePlacement === 'header' ? 'header' : 'query',
		timeoutMs,
		maxRetries: Math.min(10, Math.floor(positiveNumber(credentials.maxRetries, DEFAULT_MAX_RETRIES))),
		// Credentials saved before the budgets existed lack the fields: no budget.
		money: {
			capYuan: positiveNumber(credentials.maxSpendPerExecution, 0),
			dailyYuan: positiveNumber(credentials.dailyBudgetYuan, 0),
			monthlyYuan: positiveNumber(credentials.monthlyBudgetYuan, 0),
		},
		limiter: {
			maxConcurrent: Math.max(1, Math.floor(positiveNumber(credentials.maxConcurrent, DEFAULT_LIMITER_SETTINGS.maxConcurrent))),
			maxPerSecond: positiveNumber(credentials.maxPerSecond, DEFAULT_LIMITER_SETTINGS.maxPerSecond),
			sharedRedis: redisSettingsFromCredentials(credentials),
			timeoutMs,
		},
	};
}
