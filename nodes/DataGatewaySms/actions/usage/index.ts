import * as get from './get.operation';

export { get };

export const description = get.description;
