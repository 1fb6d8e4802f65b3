/** The README the nodes, notices and credential link to: package.json's homepage and repository. */
export const README_URL = 'https://github.com/data-gateway/n8n-nodes-data-gateway';

/** A short HTML link to a README section, for notices. */
export function readmeLink(anchor: string, text = 'More'): string {
	return `<a href="${README_URL}#${anchor}" target="_blank">${text}</a>`;
}
