/** The repository the nodes, notices and credential link to: package.json's homepage and repository. */
export const README_URL = 'https://github.com/data-gateway/n8n-nodes-data-gateway';

/**
 * The page that holds each heading the nodes link to (a path in the repository); an anchor not
 * listed is a heading of README.md itself. test/unit/docLinks.test.ts checks every link against
 * the pages, so moving a heading means changing it here.
 */
export const DOC_PAGES: Readonly<Record<string, string>> = {
	'data-gateway-vehicle': 'docs/nodes.md',
	'data-gateway-enterprise': 'docs/nodes.md',
	'data-gateway-telephone': 'docs/nodes.md',
	'data-gateway-sms': 'docs/nodes.md',
	'data-gateway-sms-trigger': 'docs/nodes.md',
	'as-a-tool-of-n8ns-ai-agent': 'docs/nodes.md',
	'pick-signatures-and-templates-by-name-sms-14': 'docs/nodes.md',
	'content-checks': 'docs/nodes.md',
	'send-window': 'docs/nodes.md',
	budgets: 'docs/money.md',
	'setup-in-the-gateway-console': 'docs/nodes.md',
	'callback-security': 'docs/nodes.md',
	'shared-redis': 'docs/credential.md',
	'at-most-once-and-how-long-each-memory-lives': 'docs/at-most-once.md',
	'delivery-reports-tied-to-their-send': 'docs/delivery-reports.md',
	'usage-counts': 'docs/usage.md',
};

/**
 * A link to the heading `anchor` on the page that holds it (GitHub's view of the main branch).
 * Set on the node itself: n8n then opens it as given, whereas from the codex alone it appends
 * `?utm_…` after the `#section`, which breaks the jump to the section.
 */
export function readmeUrl(anchor: string): string {
	const page = DOC_PAGES[anchor];
	return page ? `${README_URL}/blob/main/${page}#${anchor}` : `${README_URL}#${anchor}`;
}

/** A short HTML link to a documentation section, for notices. */
export function readmeLink(anchor: string, text = 'More'): string {
	return `<a href="${readmeUrl(anchor)}" target="_blank">${text}</a>`;
}
