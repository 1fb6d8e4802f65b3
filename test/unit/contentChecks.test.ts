/**
 * The content checks of nodes/shared/checks/content.ts: for each rule a text that trips it and a
 * close text that does not, and ordinary business templates that must give no finding at all
 * (a warning on every order notice would be ignored).
 */
import { blockingFindings, findingTexts, reviewMessageText, reviewSignatureName, reviewTemplateContent, type ContentRule } from '../../nodes/shared/checks/content';
import { refuseContentWarningsOption } from '../../nodes/shared/checks/contentOption';
import { PROHIBITED_CONTENT, TEST_DISTRIBUTION_HOSTS } from '../../nodes/shared/checks/contentWords';
import { ContentReviews } from '../../nodes/DataGatewaySms/actions/message/send/guards';

const rulesOf = (findings: Array<{ rule: ContentRule }>) => findings.map((finding) => finding.rule);
const zwsp = '\u200B';

describe('ordinary business templates give no refusal and no warning', () => {
	const chinese = [
		'您的验证码是${code}，5分钟内有效，请勿泄露给他人。',
		'您的订单${order}已发货，快递单号${no}，请注意查收。',
		'您的快件已到达${city}转运中心，预计明天送达。',
		'您的包裹正在派送中，派送员${name}，电话${tel}。',
		'您的快递已放入${locker}快递柜，取件码${code}，请及时取件。',
		'您预约的${service}将于${time}开始，请提前10分钟到达。',
		'您预约会议室${room}成功，时间${time}。',
		'${user}邀您加入会议，会议号${no}。',
		'请阅读以下注意事项：就诊当天请携带医保卡和身份证。',
		'您的旅游行程已确认：${date}出发，请携带身份证。',
		'您在${hotel}酒店的预订已确认，入住日期${date}。',
		'您的退款${amount}元已原路退还，退还款项将在1-3个工作日到账。',
		'尊敬的会员，您的账户已于${time}充值${amount}元。',
		'本月公积金已缴存到账，请查看相关信息。',
		'您好，请在${date}前修改运单信息，如需要求签收请备注。',
		'您购买的粉底液已发货，请留意物流信息。',
		'您的车辆${plate}年检将于${date}到期，请及时办理。',
		'您参加的${course}课程明天开课，集中奖励名单将另行通知。',
		'您的外卖订单已送达，祝您用餐愉快。🎉',
		'您的密码已重置，如非本人操作请联系客服。',
		'成人票2张已出票，请凭身份证入园。',
		'您已下单成功，我们将尽快为您发货。',
	];
	const english = [
		'Your verification code is ${code}. It expires in 5 minutes.',
		'Your order ${order} has shipped and will arrive on ${date}.',
		'Your parcel is out for delivery today.',
		'Reminder: your appointment with Dr. ${name} is at ${time}. Reply to reschedule.',
		'Your appointment slot on ${date} is confirmed. Please bring your ID card.',
		'Your table at ${restaurant} is booked for ${time}.',
		'The item you wanted is back in stock.',
		'Your payment of ${amount} was received. Thank you!',
		'Your password was changed. If this was not you, contact support.',
		'Your delivery method has been updated.',
		'Your hotel booking is confirmed. Best regards, the front desk.',
		'Hi ${name}, your parcel is ready: https://example.com/track/${no}',
		'Family pack 👨‍👩‍👧 delivered, enjoy!',
	];
	it.each([...chinese, ...english])('%s', (text) => {
		expect(reviewTemplateContent(text)).toEqual({ refusals: [], warnings: [] });
	});
	it.each(['顺丰速运', '京东商城', '中国移动', '招商银行', '携程旅行', 'Acme', 'Contest', 'BestBuy', '华测检测'])('signature %s', (name) => {
		expect(reviewSignatureName(name)).toEqual({ refusals: [], warnings: [] });
	});
});

describe('objective rules are refusals', () => {
	it.each<[string, string, string]>([
		['the form rules of sms.ts', '【商城】您的验证码是${code}', '您的验证码是${code}'],
		['a test-distribution link', '新版下载：https://www.pgyer.com/abcd', '新版下载：https://apps.apple.com/cn/app/id123456'],
		['a TestFlight link', 'Join the beta: https://testflight.apple.com/join/AbCd', 'Get the app: https://apps.apple.com/app/id1'],
		['a fir.im link in capitals', '安装：FIR.IM/xyz', '安装：firm.im/xyz'],
		['a full-width fir.im link', '安装：ｆｉｒ．ｉｍ/xyz', '安装：ｆｉｒｍ．ｉｍ/xyz'],
		['a fir.im link with an ideographic full stop', '请用fir。im/x安装', '请用fir。imx安装'],
		['a link broken by a zero-width character', `请用pgyer${zwsp}.com/x安装`, `请用pgyer${zwsp}com安装`],
	])('%s: trips on one text, not on a close one', (_rule, trips, close) => {
		expect(reviewTemplateContent(trips).refusals).toHaveLength(1);
		expect(reviewTemplateContent(close).refusals).toEqual([]);
	});

	it('every listed test-distribution host is refused, with a subdomain and a path', () => {
		for (const host of TEST_DISTRIBUTION_HOSTS) {
			const link = `https://go.${host.replace('*', 'com')}/app/1`;
			expect(rulesOf(reviewMessageText(`下载 ${link} 体验`).refusals)).toEqual(['test-distribution-link']);
		}
	});

	it('names the link as written and the fix', () => {
		const [refusal] = reviewTemplateContent('新版：https://www.pgyer.com/abcd 请更新').refusals;
		expect(refusal.words).toEqual(['www.pgyer.com/abcd']);
		expect(findingTexts('Content', [refusal])[0]).toBe(
			'Content links to an app test-distribution site: "www.pgyer.com/abcd". The gateway prohibits links to app test-distribution platforms and freezes a signature and template that break it, without refunding packages. Link to an app store page or your own site instead.',
		);
	});

	it.each<[string, string]>([
		['测试签名', '检测签名'],
		['AcmeTest', 'Contest'],
		['TESTShop', 'Testarossa'],
		['demo2024', 'Demon2024'],
		['测 试', '测量'],
		['深圳測試科技', '深圳测量科技'],
	])('test wording in a signature: %s is refused, %s is not', (trips, close) => {
		expect(rulesOf(reviewSignatureName(trips).refusals)).toContain('test-wording');
		expect(rulesOf(reviewSignatureName(close).refusals)).not.toContain('test-wording');
	});

	it('a signature keeps the form rules of sms.ts', () => {
		expect(rulesOf(reviewSignatureName('【顺丰】').refusals)).toEqual(['signature-form']);
	});
});

describe('prohibited content is a warning naming the category and the words', () => {
	// One text per category that trips it and a close one that does not, in the order of the gateway's list.
	const table: Array<[string, string]> = [
		['年化收益8%的理财产品', '本月公积金已到账'],
		['注册即送50元红包', '您已注册成功，欢迎使用'],
		['真人荷官在线下注', '请阅读以下注意事项'],
		['成人用品低价促销', '成人票2张已出票'],
		['Buy cannabis here', 'Cancel anytime here'],
		['明天上午游行集合', '您的旅游行程已确认'],
		['集体诉讼维权群', '集体活动报名成功'],
		['水滴筹帮帮他', '水滴净水器已发货'],
		['爱心捐款通道开启', '爱心座椅已安装'],
		['传教活动周日举行', '传真已收到'],
		['大师算命转运', '大师课明天开课'],
		['荐股群每日牛股', '牛奶每日配送'],
		['出国留学咨询', '出国签证已办好'],
		['高薪招聘兼职', '高铁票已出票'],
		['恭喜您中奖了', '集中奖励名单已公布'],
		['无抵押贷款秒到', '无门槛优惠券已到账'],
		['高回报投资项目', '高品质服务承诺'],
		['限时秒杀 1元起', '限时优惠 8折起'],
		['Fine wine delivered', 'Fine line delivered'],
		['同城交友约会', '您预约会议成功'],
		['Ammunition in stock', 'Accommodation in stock'],
		['貂皮大衣清仓', '羽绒大衣清仓'],
		['好物返现', '好物推荐'],
		['代开发票 正规', '电子发票已开具'],
		['代注册账号', '注册账号成功'],
		['加微信领取资料', '微信支付成功'],
		['出售数据 精准名单', '数据已同步'],
		['快速涨粉 引流', '快速退款'],
		['全网最低 根治', '全网包邮'],
		['殡葬一条龙', '一条龙服务热线'],
		['刷单日入500', '订单日报'],
		['五星好评返5元', '感谢您的评价'],
		['旺铺转让', '旺季到来'],
	];
	it('covers every category of the gateway\'s list', () => expect(table).toHaveLength(PROHIBITED_CONTENT.length));
	it.each(table.map(([trips, close], index) => [PROHIBITED_CONTENT[index].title, trips, close]))('%s: "%s" warns, "%s" does not', (title, trips, close) => {
		const warnings = reviewTemplateContent(trips).warnings.filter((warning) => warning.rule === 'prohibited-content');
		expect(warnings.map((warning) => warning.title)).toContain(`prohibited content: ${title}`);
		expect(reviewTemplateContent(close)).toEqual({ refusals: [], warnings: [] });
	});

	it('every listed word of every category is found in plain text', () => {
		for (const category of PROHIBITED_CONTENT) {
			for (const word of category.words) {
				const titles = reviewMessageText(` ${word} `).warnings.map((warning) => warning.title);
				expect([word, titles]).toEqual([word, expect.arrayContaining([`prohibited content: ${category.title}`])]);
			}
		}
	});

	it('names the words as written, once each, and the fix', () => {
		const [warning] = reviewTemplateContent('博彩网站，下注就送，再下注再送').warnings;
		expect(warning).toMatchObject({ rule: 'prohibited-content', title: 'prohibited content: gambling', words: ['博彩', '下注'] });
		expect(findingTexts('Content', [warning])[0]).toBe(
			'Content holds "博彩", "下注", which the gateway\'s rules list as prohibited content (gambling). The gateway prohibits such content and freezes a signature and template that break it, without refunding packages. Reword it; where the words mean something ordinary, the gateway\'s reviewers decide.',
		);
	});

	it('matches Latin words whole, in any case: "bet" is not in "better", "loan" is in "LOAN"', () => {
		expect(rulesOf(reviewMessageText('Better days ahead').warnings)).toEqual([]);
		expect(reviewMessageText('Get a LOAN today').warnings[0].words).toEqual(['LOAN']);
	});

	it('leaves out a variable\'s name: ${loan_amount} is a placeholder, not wording', () => {
		expect(reviewTemplateContent('Amount due: ${loan_amount}').warnings).toEqual([]);
		expect(reviewMessageText('Amount due on your loan: 100').warnings).toHaveLength(1);
	});

	it('a signature warns too', () => {
		expect(rulesOf(reviewSignatureName('博彩娱乐').warnings)).toEqual(['prohibited-content']);
	});
});

describe('disguised key words are warnings naming the writing and the word', () => {
	it.each<[string, string, string, string]>([
		['interference characters', '贷*款低至3厘', '贷*款', '贷款'],
		// Issue 41: a run of three separators is the longest read through (four is not: below).
		['three separators', '贷*-*款低至3厘', '贷*-*款', '贷款'],
		['spaces inside a word', '赌 博 网 站', '赌 博', '赌博'],
		['a zero-width character inside a word', `刷${zwsp}单日结`, `刷${zwsp}单`, '刷单'],
		['a variant form', '加薇信领红包', '加薇信', '加微信'],
		['a traditional form', '貸款秒批', '貸款', '贷款'],
		['a letter for a character', '加v信领资料', '加v信', '加微信'],
		['look-alike Cyrillic letters', 'Play at саsino now', 'саsino', 'casino'],
	])('%s', (_rule, text, written, word) => {
		const warning = reviewMessageText(text).warnings.find((finding) => finding.rule === 'variant-characters');
		expect(warning?.words).toEqual([written]);
		expect(warning?.problem).toContain(`"${written}" (read as ${word}:`);
	});

	it.each(['贷款*', '贷*-*-款低至3厘', '赌，博', '贷-款-额-度-高'.replace(/-/g, '----'), '张薇信息已更新', 'wx123', '刷，单'])('close text %s is not read as a key word', (text) => {
		expect(rulesOf(reviewMessageText(text).warnings)).not.toContain('variant-characters');
	});
});

describe('form warnings: invisible, mixed-width and look-alike characters', () => {
	it('invisible characters: named by code point and place; an emoji\'s joiner is not one', () => {
		const warning = reviewMessageText(`您的验${zwsp}证码是1234\uFEFF`).warnings.find((finding) => finding.rule === 'invisible-characters');
		expect(warning?.words).toEqual(['U+200B after "您的验"', 'U+FEFF after "234"']);
		expect(reviewMessageText('全家福 👨‍👩‍👧 已冲印').warnings).toEqual([]);
	});

	it.each<[string, string, string]>([
		['mixed-width', 'ＶIP专享', 'ＶＩＰ专享'],
		['mixed-width', '订单ｎo.${no}', '订单no.${no}'],
		['lookalike-letters', 'Your оrder shipped', 'Ваш заказ отправлен'],
		['lookalike-letters', 'Pay with Αpple', 'Alpha and Ω'],
	])('%s: "%s" warns, "%s" does not', (rule, trips, close) => {
		expect(rulesOf(reviewMessageText(trips).warnings)).toContain(rule);
		expect(reviewMessageText(close).warnings).toEqual([]);
	});

	it('names the mixed word and the written fix', () => {
		const warning = reviewMessageText('ＶIP专享').warnings[0];
		expect(warning.problem).toBe('mixes full-width and half-width letters in "ＶIP"');
		expect(warning.fix).toContain('"VIP"');
	});
});

describe('over-broad signatures warn', () => {
	it.each<[string, string]>([
		['短信通知', '顺丰通知'],
		['官方客服', '美团客服'],
		['SMS', 'SMSGo'],
		['验证码平台123', '小米验证码'],
	])('%s warns, %s does not', (trips, close) => {
		expect(rulesOf(reviewSignatureName(trips).warnings)).toEqual(['over-broad-name']);
		expect(reviewSignatureName(close)).toEqual({ refusals: [], warnings: [] });
	});
});

describe('what stops a Send', () => {
	const review = reviewMessageText('下载 https://fir.im/x 领彩票');
	it('refusals always; warnings only when asked to refuse them', () => {
		expect(rulesOf(blockingFindings(review, false))).toEqual(['test-distribution-link']);
		expect(rulesOf(blockingFindings(review, true))).toEqual(['test-distribution-link', 'prohibited-content']);
	});
});

describe('the Refuse Content Warnings option', () => {
	it('is off by default', () => expect(refuseContentWarningsOption).toMatchObject({ name: 'refuseContentWarnings', type: 'boolean', default: false }));
});

describe('words are named in the order of the text', () => {
	it('whatever their length', () => expect(reviewMessageText('下注送彩票，百家乐').warnings.find((warning) => warning.title === 'prohibited content: gambling')?.words).toEqual(['下注', '百家乐']));
});

describe("a run's content reviews (SMS Send: send/guards.ts ContentReviews)", () => {
	it('review each message again unless it is the one reviewed last: a batch of one text is reviewed once', () => {
		const reviews = new ContentReviews();
		const link = 'Download: https://fir.im/x';
		const plain = reviews.review('ShopName', 'Your order has shipped.');
		expect(reviews.review('ShopName', 'Your order has shipped.')).toBe(plain);
		expect(plain.refusals).toEqual([]);
		expect(rulesOf(reviews.review('ShopName', link).refusals.map(({ finding }) => finding))).toEqual(['test-distribution-link']);
		expect(reviews.review('ShopName', 'Your order has shipped.').refusals).toEqual([]);
		// Another signature is another message.
		expect(rulesOf(reviews.review(link, 'Your order has shipped.').refusals.map(({ finding }) => finding))).toEqual(['test-distribution-link']);
		expect(reviews.review(undefined, 'Your order has shipped.').refusals).toEqual([]);
	});
});

describe('what each finding says, as the node shows it (the snapshot pins every word)', () => {
	it.each<[string, () => unknown]>([
		['a test-distribution link', () => reviewTemplateContent('新版下载：https://www.pgyer.com/abcd')],
		['the template rules', () => reviewTemplateContent('【商城】您的验证码是${code}')],
		['the signature rules', () => reviewSignatureName('【顺丰】')],
		['test wording in a signature', () => reviewSignatureName('AcmeTest')],
		['an over-broad signature, spaced', () => reviewSignatureName(' 短信通知 ')],
		['a key word in disguise, and the same word plain', () => reviewMessageText('加薇信领红包，加微信领红包')],
		['key words nested in a longer one', () => reviewMessageText('网络赌博网站，赌博')],
		['invisible characters, at the start and after text', () => reviewMessageText(`${zwsp}您的验${zwsp}证码`)],
		['mixed-width letters', () => reviewMessageText('ＶIP专享')],
		['look-alike letters', () => reviewMessageText('Your оrder shipped, Pay with Αpple')],
		['an emoji joined, a joiner alone', () => reviewMessageText('👨‍👩 ok \u200D end')],
		['a joiner after an emoji only, and before one only', () => reviewMessageText('👨\u200Dok ok\u200D👩')],
		['a soft hyphen (a code point under U+1000)', () => reviewMessageText('验\u00AD证码')],
		['a key word in disguise only', () => reviewMessageText('加薇信领红包')],
		['two disguised readings', () => reviewMessageText('加薇信领红包，貸款秒批')],
		['an ordinary phrase before a key word', () => reviewMessageText('请以下注意：赌博')],
		['key words inside longer ones of their category', () => reviewMessageText('请添加微信，Cheap cigarettes')],
		['test wording in Chinese, traditional', () => reviewSignatureName('深圳測試科技')],
		['a blank signature', () => reviewSignatureName('   ')],
	])('%s', (_name, review) => {
		expect(review()).toMatchSnapshot();
	});
});
