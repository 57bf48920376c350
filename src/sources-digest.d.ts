// Types of sources-digest.js, which stays plain JavaScript for the launcher.
export const digestFile: string;
export function sourcesDigest(srcDir: string): Promise<string>;
