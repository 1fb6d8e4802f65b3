// Copies what tsc does not: node icons and codex JSON files, next to the compiled nodes.
const { src, dest, task } = require('gulp');

task('build:assets', () =>
	src(['nodes/**/*.{svg,png,json}', 'credentials/**/*.{svg,png}'], { base: '.', encoding: false }).pipe(
		dest('dist'),
	),
);
