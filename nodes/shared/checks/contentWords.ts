/**
 * The word list behind the content checks (content.ts), kept in one place so it can be read, argued
 * over and changed without touching the logic. docs/gateway-api.md#limits: the gateway freezes a
 * signature and template whose content breaks its rules, without refund.
 *
 * How a word matches: text and words are compared after folding full-width forms to half-width and
 * upper case to lower case. A word with Chinese characters matches anywhere; at an end that is a
 * Latin letter or digit it matches only where no letter or digit joins it, so "bet" is not found in
 * "better" and "加V" not in "加VIP". Inner spaces of a Latin phrase match any run of spaces.
 *
 * Scope: a few unambiguous words per category, chosen so ordinary notices (verification codes,
 * orders, deliveries, appointments, payments) never match: no single characters, no words that
 * also name ordinary things ("转运" is a parcel hub, "酒店" a hotel, "stock" what a shop has), none
 * that ordinary words make across their join ("查看相关" holds "看相", "到期货款" "期货"), and a
 * category's `except` phrases for the few joins kept ("以下注意" holds "下注").
 * A match is a warning for a person to judge, not a verdict; the gateway's reviewers decide.
 */

export interface ProhibitedCategory {
	/** The category as the gateway's limits name it. */
	title: string;
	words: readonly string[];
	/** Ordinary phrases that hold one of the words without meaning it ("预约会议" holds "约会"). */
	except?: readonly string[];
}

/** The prohibited content of the gateway's limits, in the order the gateway lists it. */
export const PROHIBITED_CONTENT: readonly ProhibitedCategory[] = [
	{ title: 'financial content', words: ['理财', '基金', '外汇', '年化收益', '数字货币', '虚拟币', '比特币', '套现', 'forex', 'bitcoin', 'crypto', 'cryptocurrency', 'mutual fund', 'wealth management'] },
	{ title: 'invitations to register or become a member', words: ['注册送', '注册即送', '注册就送', '注册领', '注册有礼', '立即注册', '免费注册', '邀您注册', '邀请您注册', '入会送', '入会有礼', 'sign up now', 'register now', 'join now', 'become a member'] },
	{ title: 'gambling', words: ['赌博', '博彩', '赌场', '赌球', '百家乐', '老虎机', '下注', '投注', '真人荷官', 'casino', 'gambling', 'betting', 'baccarat', 'slot machine'], except: ['下注意'] },
	{ title: 'adult content', words: ['色情', '成人用品', '情趣用品', '约炮', '裸聊', '一夜情', '援交', 'porn', 'porno', 'pornography', 'nude', 'nudes', 'sexy', 'adult video'] },
	{ title: 'drugs', words: ['毒品', '大麻', '冰毒', '摇头丸', '海洛因', 'K粉', 'cocaine', 'heroin', 'marijuana', 'cannabis', 'meth'] },
	{ title: 'political content', words: ['游行', '示威', '罢工', '反政府', '政变', 'protest', 'riot', 'anti-government'], except: ['游行程'] },
	{ title: 'legal-rights campaigns', words: ['维权', '上访', '集体诉讼', '讨薪', 'class action'] },
	{ title: 'crowdfunding', words: ['众筹', '水滴筹', '轻松筹', '筹款', 'crowdfunding', 'crowdfund', 'gofundme'] },
	{ title: 'charity', words: ['慈善', '捐款', '募捐', '爱心捐', '捐赠', 'charity', 'donate', 'donation', 'donations'] },
	{ title: 'religion', words: ['宗教', '传教', '佛教', '基督教', '天主教', '伊斯兰教', 'church', 'bible', 'religion', 'religious'] },
	{ title: 'superstition', words: ['算命', '风水', '占卜', '开光', '塔罗', 'fortune telling', 'horoscope', 'tarot', 'feng shui'] },
	{ title: 'stocks', words: ['股票', '炒股', '荐股', '牛股', '涨停', '股市', '配资', 'stock tip', 'stock tips', 'stock market', 'penny stock', 'penny stocks'] },
	{ title: 'study abroad', words: ['留学', 'study abroad'] },
	{ title: 'recruitment', words: ['招聘', '诚聘', '招工', '兼职', '高薪', 'hiring', 'recruiting', 'recruitment', 'job offer', 'part-time job', 'part-time jobs', 'work from home'] },
	{ title: 'lotteries and prizes', words: ['彩票', '中奖', '抽奖', '开奖', '双色球', '大乐透', '头奖', 'lottery', 'jackpot', 'prize draw', 'you have won', "you've won", 'sweepstakes'], except: ['集中奖', '中奖学金'] },
	{ title: 'loans and debt collection', words: ['贷款', '借贷', '网贷', '低息', '无抵押', '信用贷', '催收', '债务', '还款', 'loan', 'loans', 'debt', 'debts', 'payday', 'debt collection'], except: ['退还款', '返还款', '归还款'] },
	{ title: 'investment', words: ['投资', '入股', '高回报', '稳赚', '回报率', '躺赚', 'invest', 'investing', 'investment', 'investments', 'guaranteed return', 'guaranteed returns', 'high returns'] },
	{ title: 'flash-sale schemes', words: ['秒杀', '限时抢购', '一元抢', '0元购', '零元购', 'flash sale', 'flash deal', 'flash deals'] },
	{ title: 'alcohol and tobacco', words: ['白酒', '红酒', '啤酒', '洋酒', '葡萄酒', '茅台', '五粮液', '香烟', '烟草', '电子烟', '雪茄', 'alcohol', 'beer', 'wine', 'wines', 'whisky', 'whiskey', 'vodka', 'cigarette', 'cigarettes', 'tobacco', 'vape', 'vapes', 'cigar', 'cigars'] },
	{ title: 'dating', words: ['交友', '约会', '相亲', '婚恋', '脱单', '陪聊', '征婚', 'dating', 'hookup', 'singles near you'], except: ['预约会'] },
	{ title: 'violence', words: ['暴力', '枪支', '砍人', '杀人', '血腥', '弹药', 'violence', 'violent', 'firearm', 'firearms', 'weapon', 'weapons', 'ammunition'] },
	{ title: 'fur', words: ['皮草', '貂皮', '水貂', 'fur', 'furs', 'mink coat'] },
	{ title: 'cashback', words: ['返现', '返利', '返佣', '现金返还', 'cashback', 'cash back', 'rebate', 'rebates'] },
	{ title: 'invoice services', words: ['代开发票', '发票代开', '代开票', '出售发票', 'fake invoice', 'fake invoices', 'invoices for sale'] },
	{ title: 'proxy registration', words: ['代注册', '代实名', '代认证', '代办证件'] },
	{ title: 'group or contact-adding requests', words: ['加群', '进群', '入群', '加微信', '加V', '加QQ', '加好友', '添加微信', 'join our group', 'add me on', 'whatsapp group', 'telegram group'], except: ['参加群', '增加群', '追加群'] },
	{ title: 'sale of personal data', words: ['出售数据', '数据出售', '名单出售', '出售名单', '客户名单', '精准名单', '手机号资源', '个人信息出售', 'leads for sale', 'data for sale', 'phone number list'] },
	{ title: 'traffic marketing', words: ['引流', '涨粉', '刷粉', '刷量', '刷流量', '刷播放', 'buy followers', 'boost followers', 'followers for sale'] },
	{ title: 'wording the Advertising Law forbids', words: ['最高级', '顶级', '极品', '全网最低', '史上最低', '全国第一', '行业第一', '世界第一', '销量第一', '第一品牌', '根治', '包治百病', '无效退款', '100%有效', 'best in the world', "world's best", '100% effective', 'guaranteed cure'] },
	{ title: 'funeral services', words: ['殡葬', '墓地', '骨灰', '丧葬', '陵园', '寿衣', '公墓', 'funeral', 'funerals', 'cemetery', 'burial'] },
	{ title: 'fake orders', words: ['刷单', '刷信誉', '刷销量', '刷好评', 'fake orders', 'brushing orders'] },
	{ title: 'review solicitation', words: ['好评返', '五星好评', '给个好评', '求好评', '晒图返', '5-star review', 'five-star review', 'leave a review', 'rate us'] },
	{ title: 'shop transfers', words: ['店铺转让', '网店转让', '转让店铺', '旺铺转让', '店铺出售', '出售店铺', 'shop for sale', 'store for sale', 'shop transfer'] },
];

/**
 * Written forms that stand for a listed word, to slip past filters ("misspelled or variant
 * characters in key wording"): a look-alike or traditional character, a letter for a character.
 * Only whole forms are listed, so an ordinary name with one of the characters is left alone.
 */
export const VARIANT_WORDS: Readonly<Record<string, string>> = {
	薇信: '微信',
	徽信: '微信',
	溦信: '微信',
	v信: '微信',
	vx: '微信',
	wx: '微信',
	貸款: '贷款',
	賭博: '赌博',
	賭場: '赌场',
	博採: '博彩',
	刷単: '刷单',
	彩漂: '彩票',
	測試: '测试',
};

/**
 * Hosts of app test-distribution platforms (beta builds installed outside the app stores), whose
 * links the gateway prohibits. A host matches with any subdomain; `pgyer` with any ending.
 */
export const TEST_DISTRIBUTION_HOSTS: readonly string[] = [
	'pgyer.*', // 蒲公英 (Pgyer)
	'fir.im', // fir.im
	'betaqr.com', // fir.im's later address
	'testflight.apple.com', // Apple TestFlight
	'install.appcenter.ms', // Microsoft App Center distribution
	'diawi.com', // Diawi
	'appdistribution.firebase.dev', // Firebase App Distribution
];

/** Test wording, which the gateway does not accept in a signature: Chinese words, and Latin words standing alone. */
export const SIGNATURE_TEST_WORDS: readonly string[] = ['测试', '调试', 'test', 'tests', 'testing', 'demo'];

/** Words that say nothing of who sends: a signature made of these alone is over-broad. */
export const GENERIC_SIGNATURE_WORDS: readonly string[] = [
	'通知', '短信', '验证码', '客服', '系统', '平台', '官方', '提醒', '服务', '中心', '消息', '信息', '公告', '中国', '全国', '网站', '会员', '商城', '在线',
	'sms', 'app', 'info', 'service', 'notice', 'system', 'official', 'admin',
];
