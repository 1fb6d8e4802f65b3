import { NodeOperationError, type IDataObject, type IHookFunctions, type IWebhookFunctions } from 'n8n-workflow';

import { NODE_VERSION_1_2 } from '../shared/n8n/description';

/**
 * From version 1.2 the URL Token is a segment of the webhook path, so the URLs n8n shows in the
 * node (Test and Production) are the whole callback URL, ready to copy into the gateway. Versions
 * 1 and 1.1 keep the plain path with the token as `?token=…`, so saved triggers and the URL
 * already pasted into the gateway keep working.
 */
export const TOKEN_IN_PATH_VERSION = NODE_VERSION_1_2;

const BASE_PATH = 'data-gateway-sms';

/** The webhook path, resolved by n8n with the node's parameters both for its URL display and for registering the webhook. */
export const WEBHOOK_PATH = `={{ $nodeVersion >= ${TOKEN_IN_PATH_VERSION} && $parameter["security"]?.token ? "${BASE_PATH}/" + $parameter["security"].token : "${BASE_PATH}" }}`;

/** A token that can stand in a URL path as it is. */
const PATH_TOKEN = /^[A-Za-z0-9_-]+$/;

/** The token the request presents: the last path segment from 1.2 on, `?token=` before. */
export function presentedToken(ctx: IWebhookFunctions): IDataObject[string] {
	if (ctx.getNode().typeVersion < TOKEN_IN_PATH_VERSION) return (ctx.getQueryData() as IDataObject).token;
	const request = ctx.getRequestObject();
	const path = new URL(request.originalUrl ?? request.url ?? '/', 'http://callback.invalid').pathname;
	const last = path.split('/').filter(Boolean).pop() ?? '';
	try {
		return decodeURIComponent(last);
	} catch {
		return last;
	}
}

/**
 * On publishing or listening: a 1.2 token must fit in a URL path as typed, or the URL n8n shows
 * would not be the one it serves. It must not be an expression either: n8n registers the webhook
 * path with the description's `$parameter`, which resolves only top-level parameters, so the
 * path would hold the expression's text while each request is compared with its value (every
 * callback refused). The field offers no expression mode from 1.2 (n8n 2.x then loads a saved
 * one as its text without the leading '='); this catches saved ones in either form.
 */
export function checkPathToken(ctx: IHookFunctions): void {
	if (ctx.getNode().typeVersion < TOKEN_IN_PATH_VERSION) return;
	const saved = (ctx.getNode().parameters?.security as IDataObject | undefined)?.token;
	if (typeof saved === 'string' && (saved.startsWith('=') || saved.includes('{{'))) {
		throw new NodeOperationError(ctx.getNode(), 'Security > URL Token cannot be an expression', {
			description:
				'n8n builds the callback URL from the text of this field, not from the value of an expression, so no callback would ever be accepted. Type the token itself, e.g. the output of openssl rand -hex 16, and copy the Production URL into the gateway again.',
		});
	}
	const token = String((ctx.getNodeParameter('security', {}) as IDataObject).token ?? '');
	if (token !== '' && !PATH_TOKEN.test(token)) {
		throw new NodeOperationError(ctx.getNode(), 'Security > URL Token may use only letters, digits, - and _', {
			description: 'It is part of the callback URL. Generate one, e.g. with openssl rand -hex 16.',
		});
	}
}
