/** The README the nodes, notices and credential link to: package.json's homepage and repository. */
export const README_URL = 'https://github.com/data-gateway/n8n-nodes-data-gateway';

/**
 * A node's documentation link. Set on the node itself: n8n then opens it as given, whereas from
 * the codex alone it appends `?utm_…` after the `#section`, which breaks the jump to the section.
 */
export function readmeUrl(anchor: string): string {
	return `${README_URL}#${anchor}`;
}

/** A short HTML link to a README section, for notices. */
export function readmeLink(anchor: string, text = 'More'): string {
	return `<a href="${readmeUrl(anchor)}" target="_blank">${text}</a>`;
}
