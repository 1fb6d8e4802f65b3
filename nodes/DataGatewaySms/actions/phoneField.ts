import type { IDisplayOptions, INodeProperties } from 'n8n-workflow';

/** The Phone Number field of Send and of the opt-out list: one number per item, normalised the same way by both. */
export function phoneNumberField(description: string, show: NonNullable<IDisplayOptions['show']>): INodeProperties {
	return {
		displayName: 'Phone Number',
		name: 'phone',
		type: 'string',
		required: true,
		default: '',
		placeholder: 'e.g. 13800138000',
		description,
		displayOptions: { show },
	};
}
