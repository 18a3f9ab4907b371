"""Small fixed word lists for the offline extractor, English and Simplified Chinese.

Kept deliberately short: they steer rules, they are not dictionaries. jieba's own dictionary supplies
the Chinese vocabulary; the lists here correct its noisiest part-of-speech tags and add the few
products, organisations and places agent traffic mentions all the time.
"""

from __future__ import annotations

# --- stop words (search tokens, keywords) -----------------------------------------------------------

EN_STOP: frozenset[str] = frozenset("""
a about above after again against all also am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
either else etc even ever every few for from further get gets got had hadn't has hasn't have haven't having he
he'd he'll he's her here here's hers herself him himself his how how's however i i'd i'll i'm i've if in into
is isn't it it's its itself just let let's like may me might more most much must mustn't my myself no nor not
now of off on once one only or other ought our ours ourselves out over own per please quite rather really same
shall shan't she she'd she'll she's should shouldn't so some such than that that's the their theirs them
themselves then there there's these they they'd they'll they're they've this those though through thus to too
under until up upon us very via was wasn't we we'd we'll we're we've were weren't what what's when when's
where where's whether which while who who's whom whose why why's will with within without won't would wouldn't
yes yet you you'd you'll you're you've your yours yourself yourselves ok okay hi hello thanks thank s t re ve
ll d m
""".split())

# Words that carry little topic on their own: excluded from keywords and topics, kept for search.
EN_WEAK: frozenset[str] = frozenset("""
use used uses using make made makes making need needs needed want wants wanted go goes going went gone come
comes came take takes took taken give gives gave given keep keeps kept put puts say says said tell told know
known think thought see seen look looks looked find found try tried show shows shown call called set sets add
added adds run runs ran work works worked start starts started stay stays stayed move moved change changed
changes leave leaves left help helps way thing things something anything everything nothing lot lots bit new old
good great best better nice fine sure right well still already again back next last first second third also
instead anyway around away maybe perhaps about approx approximately total whole part include included includes
including included remain remains become becomes available able done day days time times week weeks month months
year years today tomorrow yesterday tonight morning afternoon evening night minute minutes hour hours true false
none null heads-up second seconds currently exactly early late later soon now then always never often sometimes
usually each every many several few more less least most enough other others another such same different
important heads note noted sorry hey yeah yep nope hmm ah oh pls decision decided done shall suggest suggested
would like prefer let lets one two three four five six seven eight nine ten
""".split())

ZH_STOP: frozenset[str] = frozenset("""
的 了 是 在 和 与 及 或 也 都 就 还 又 而 并 但 但是 而且 因为 所以 如果 那么 那 这 这个 那个 这些 那些 这样
那样 这里 那里 我 我们 你 你们 您 他 她 它 他们 她们 它们 自己 咱们 本人 之 其 其他 其它 各 每 某 该 此 个 位 把
被 让 给 对 向 从 到 于 以 为 吗 呢 吧 啊 呀 哦 嗯 哈 啦 嘛 么 着 过 得 地 所 很 太 更 最 非常 比较 一点 一些
有些 一下 一个 一次 一种 没有 不 没 别 要 会 能 可以 可能 应该 需要 已经 正在 还是 就是 只是 只 才 再 又 已 将
把 有 没 去 来 上 下 中 里 外 后 前 等 等等 之类 什么 怎么 怎样 如何 为什么 哪 哪里 哪个 谁 多少 几 这么 那么
以及 还有 然后 另外 其中 通过 根据 关于 对于 由于 虽然 即使 不过 然而 好的 好 谢谢 收到 明白 知道 嗯嗯 请 请问
一下 一起 时候 时 后来 之后 以后 之前 以前 目前 现在 今天 明天 昨天
""".split())

# --- chit-chat ----------------------------------------------------------------------------------------

CHIT_CHAT: frozenset[str] = frozenset({
    "ok", "okay", "ok thanks", "thanks", "thank you", "thx", "sure", "yes", "no", "got it", "cool",
    "great", "nice", "hello", "hi", "bye", "sounds good", "alright", "fine",
    "好的", "好", "谢谢", "明白了", "收到", "嗯", "好吧", "可以", "没问题", "你好", "再见", "知道了",
})
CHIT_CHAT_WORDS: frozenset[str] = frozenset("""
ok okay k thanks thank thx ty you so much very sure yes yeah yep no nope got it cool great nice hello hi hey bye
goodbye see later sounds good alright fine good morning afternoon evening night perfect awesome lol wonderful
excellent cheers welcome np noted understood right a lot many 好的 好 谢谢 多谢 明白了 明白 收到 嗯 嗯嗯 好吧
可以 没问题 你好 再见 知道了 早上好 晚安 辛苦了 辛苦 太好了 棒 不错 了 啦 呀 哈
""".split())

# --- sentiment ----------------------------------------------------------------------------------------
# (word, weight). Evaluative words also make a text subjective; outcome words (passed/failed) do not.

EN_POSITIVE_EVAL: dict[str, float] = {w: 1.0 for w in """
good great excellent perfect love loved lovely like liked nice happy glad pleased awesome amazing wonderful
fantastic beautiful enjoy enjoyed fun helpful comfortable convenient clean friendly delicious cozy cosy
recommend recommended best better favourite favorite satisfied impressive smooth brilliant superb
""".split()}
EN_POSITIVE_OUTCOME: dict[str, float] = {w: 1.0 for w in """
thanks thank success successful succeeded succeeds passed pass passes fixed resolved solved confirmed green
improved faster
""".split()}
EN_NEGATIVE_EVAL: dict[str, float] = {w: 1.0 for w in """
bad terrible awful horrible hate hated dislike poor worse worst ugly noisy dirty rude annoying annoyed
disappointed disappointing disappointment unhappy sad angry frustrated frustrating upset garbage broken slow
expensive overpriced uncomfortable painful unfortunately sorry awkward
""".split()}
EN_NEGATIVE_OUTCOME: dict[str, float] = {
    **{w: 1.0 for w in """problem problems issue issues bug bugs wrong missing unavailable denied refused
    timeout cancelled canceled delayed delay crash crashed crashes warning deprecated exhaust""".split()},
    **{w: 2.0 for w in "error errors failed fail fails failure failures exception".split()},
}
EN_NEGATORS: frozenset[str] = frozenset("""
not no never none nothing nobody neither nor without hardly barely isn't aren't wasn't weren't don't doesn't
didn't won't wouldn't can't cannot couldn't shouldn't haven't hasn't hadn't ain't
""".split())

ZH_POSITIVE_EVAL: dict[str, float] = {w: 1.0 for w in """
很好 太好了 真好 挺好 不错 喜欢 满意 开心 高兴 完美 方便 舒服 舒适 干净 漂亮 美味 好吃 优秀 很棒 合适 理想 愉快
喜爱 划算 实惠 热情 顺利
""".split()}
ZH_POSITIVE_OUTCOME: dict[str, float] = {w: 1.0 for w in "成功 通过 完成 解决 修复 谢谢 感谢 搞定 正常".split()}
ZH_NEGATIVE_EVAL: dict[str, float] = {w: 1.0 for w in """
不好 很差 太差 糟糕 讨厌 失望 不满 不满意 难吃 吵 嘈杂 脏 太贵 很贵 难受 生气 烦人 心烦 垃圾 遗憾 抱歉 可惜 不便
不方便 乱码
""".split()}
ZH_NEGATIVE_OUTCOME: dict[str, float] = {
    **{w: 1.0 for w in "问题 超时 延误 取消 满房 售罄 无空房 挂了 失效 拒绝 故障 不可用".split()},
    **{w: 2.0 for w in "失败 错误 异常 报错 崩溃".split()},
}
ZH_NEGATORS: tuple[str, ...] = ("没有", "并不", "不是", "不太", "不", "没", "未", "别", "无", "非")

EN_OPINION_CUES: tuple[str, ...] = (
    "i think", "i believe", "i feel", "i guess", "i suppose", "in my opinion", "i prefer", "i'd prefer",
    "i would prefer", "i like", "i love", "i hate", "i'd like", "i would like", "i want", "i wish", "i hope",
    "we'd like", "we would like", "we'd love", "we prefer", "we want", "seems", "seem to", "probably", "ideally",
    "i'd rather", "i would rather", "should be", "it's better", "it is better", "looks like", "i'd skip",
)
ZH_OPINION_CUES: tuple[str, ...] = (
    "觉得", "认为", "喜欢", "讨厌", "希望", "最好", "感觉", "好像", "似乎", "我想", "宁愿", "更想", "偏好", "建议",
    "恐怕", "估计", "宁可",
)

# --- entities: English --------------------------------------------------------------------------------

# Canonical display name for products and tools; keys are casefolded spellings.
PRODUCTS: dict[str, str] = {k.casefold(): v for k, v in {
    "Django": "Django", "Flask": "Flask", "FastAPI": "FastAPI", "Redis": "Redis", "pandas": "pandas",
    "NumPy": "NumPy", "SciPy": "SciPy", "Python": "Python", "PostgreSQL": "PostgreSQL", "Postgres": "PostgreSQL",
    "MySQL": "MySQL", "SQLite": "SQLite", "MongoDB": "MongoDB", "Elasticsearch": "Elasticsearch",
    "nginx": "nginx", "gunicorn": "gunicorn", "uvicorn": "uvicorn", "daphne": "daphne", "Celery": "Celery",
    "RabbitMQ": "RabbitMQ", "Kafka": "Kafka", "Docker": "Docker", "Kubernetes": "Kubernetes", "k8s": "Kubernetes",
    "werkzeug": "Werkzeug", "Jinja": "Jinja", "SQLAlchemy": "SQLAlchemy", "pytest": "pytest", "tox": "tox",
    "pip": "pip", "poetry": "Poetry", "setuptools": "setuptools", "distutils": "distutils",
    "psycopg": "psycopg", "psycopg2": "psycopg2", "pgvector": "pgvector", "PgBouncer": "PgBouncer",
    "django-import-export": "django-import-export", "Django REST framework": "Django REST framework",
    "DRF": "Django REST framework", "Channels": "Channels", "jieba": "jieba", "Pydantic": "Pydantic",
    "httpx": "httpx", "openpyxl": "openpyxl", "TensorFlow": "TensorFlow",
    "PyTorch": "PyTorch", "torch": "PyTorch", "Jupyter": "Jupyter", "Node.js": "Node.js", "Node": "Node.js",
    "npm": "npm", "React": "React", "Vue": "Vue", "Vue.js": "Vue", "Angular": "Angular", "Next.js": "Next.js",
    "TypeScript": "TypeScript", "JavaScript": "JavaScript", "Java": "Java", "Kotlin": "Kotlin",
    "Golang": "Go", "Rust": "Rust", "Ruby": "Ruby", "Rails": "Rails", "PHP": "PHP", "Laravel": "Laravel",
    "Spring": "Spring", "Git": "Git", "GitHub": "GitHub", "GitLab": "GitLab", "Bitbucket": "Bitbucket",
    "Jira": "Jira", "Slack": "Slack", "Dependabot": "Dependabot", "Linux": "Linux", "Ubuntu": "Ubuntu",
    "Debian": "Debian", "macOS": "macOS", "Windows": "Windows", "iOS": "iOS", "Android": "Android",
    "Chrome": "Chrome", "Firefox": "Firefox", "Safari": "Safari", "Excel": "Excel", "PowerPoint": "PowerPoint",
    "Outlook": "Outlook", "Gmail": "Gmail", "WeChat": "WeChat", "Alipay": "Alipay", "Zoom": "Zoom",
    "Notion": "Notion", "Figma": "Figma", "ChatGPT": "ChatGPT", "Claude": "Claude", "AWS": "AWS",
    "S3": "S3", "Lambda": "Lambda", "Terraform": "Terraform", "Ansible": "Ansible", "Jenkins": "Jenkins",
    "VS Code": "VS Code", "VSCode": "VS Code", "Vim": "Vim", "Emacs": "Emacs", "pyenv": "pyenv",
    "Sentry": "Sentry", "Grafana": "Grafana", "Prometheus": "Prometheus", "Neo4j": "Neo4j",
    "Airflow": "Airflow", "Spark": "Spark", "Hadoop": "Hadoop", "Selenium": "Selenium", "Playwright": "Playwright",
    "webpack": "webpack", "Vite": "Vite", "Bootstrap": "Bootstrap", "Tailwind": "Tailwind",
    "iPhone": "iPhone", "iPad": "iPad", "MacBook": "MacBook",
}.items()}
# Spellings that are also ordinary English words: matched only with their capitals.
PRODUCTS_CASE_SENSITIVE: frozenset[str] = frozenset({
    "Flask", "Python", "Channels", "Node", "Rust", "Ruby", "Rails", "Spring", "Excel", "Windows", "Zoom",
    "Notion", "Claude", "Lambda", "Spark", "Vim", "Jira", "Slack", "Chrome", "Safari", "Java", "Vue", "React",
    "Angular", "Jinja", "Sentry", "Bootstrap", "Tailwind", "Vite", "Airflow", "Git", "Linux", "Poetry",
})

ORGANIZATIONS: dict[str, str] = {k.casefold(): k for k in (
    "Google", "Microsoft", "Apple", "Amazon", "Meta", "OpenAI", "Anthropic", "Alibaba", "Tencent", "Baidu",
    "ByteDance", "Huawei", "Xiaomi", "Ctrip", "Trip.com", "Airbnb", "Booking.com", "Expedia", "Uber", "Didi",
    "easyJet", "Ryanair", "Lufthansa", "Emirates", "Air China", "China Eastern", "China Southern", "KLM",
    "IBM", "Oracle", "Intel", "Nvidia", "Samsung", "Sony", "Tesla", "Netflix", "Spotify", "PayPal", "Stripe",
    "Visa", "Mastercard", "Cloudflare", "Mozilla", "UNESCO", "WHO",
)}

PLACES: dict[str, str] = {k.casefold(): k for k in (
    "Shanghai", "Beijing", "Hangzhou", "Shenzhen", "Guangzhou", "Chengdu", "Chongqing", "Nanjing", "Suzhou",
    "Xi'an", "Xian", "Wuhan", "Tianjin", "Xiamen", "Qingdao", "Kunming", "Lhasa", "Harbin", "Sanya", "Guilin",
    "Hong Kong", "Macau", "Macao", "Taipei", "Tokyo", "Osaka", "Kyoto", "Seoul", "Singapore", "Bangkok",
    "Hanoi", "Bali", "Mumbai", "Delhi", "Dubai", "Istanbul", "Moscow", "London", "Paris", "Berlin", "Munich",
    "Frankfurt", "Hamburg", "Rome", "Milan", "Venice", "Florence", "Madrid", "Barcelona", "Lisbon", "Lisboa",
    "Porto", "Sintra", "Amsterdam", "Brussels", "Vienna", "Prague", "Budapest", "Warsaw", "Zurich", "Geneva",
    "Copenhagen", "Stockholm", "Oslo", "Helsinki", "Dublin", "Edinburgh", "Manchester", "Liverpool", "Athens",
    "New York", "San Francisco", "Los Angeles", "Chicago", "Boston", "Seattle", "Washington", "Miami",
    "Toronto", "Vancouver", "Montreal", "Sydney", "Melbourne", "Auckland", "Cairo", "Nairobi", "Cape Town",
    "China", "Japan", "Korea", "Thailand", "Vietnam", "India", "France", "Germany", "Italy", "Spain",
    "Portugal", "Netherlands", "Belgium", "Switzerland", "Austria", "Greece", "Ireland", "Scotland", "England",
    "Britain", "UK", "USA", "America", "Canada", "Mexico", "Brazil", "Australia", "Europe", "Asia", "Africa",
    "Hongqiao", "Pudong", "Bund", "The Bund", "Alfama", "Baixa",
)}

# Head words that type a capitalised name: last word (or first, for "Hotel X", "Lake X", "Bank of X").
PLACE_HEADS: frozenset[str] = frozenset("""
hotel hotels inn hostel resort lodge motel suites airport station terminal lake river mountain mount mt hill
park garden gardens street st road rd avenue ave boulevard blvd lane square plaza bridge temple museum tower
palace castle cathedral church mosque gate pier port harbour harbor bay beach island islands valley canyon city
town village district county province state region bund market mall centre center hall stadium zoo restaurant
cafe café bistro bar pub pizzeria taberna trattoria boutique apartments residence villa casa campus quarter
wharf
""".split())
PLACE_FIRST: frozenset[str] = frozenset("""
hotel hostel lake mount mt fort port casa pizzeria taberna trattoria cafe café restaurant museum palace temple
cape isle villa
""".split())
ORG_HEADS: frozenset[str] = frozenset("""
inc inc. ltd ltd. llc corp corp. corporation company co co. plc gmbh ag sa bank group foundation university
institute college school academy airlines airways air ministry agency association society committee council
department bureau office team labs lab studio studios partners holdings ventures capital systems technologies
technology software solutions consulting services
""".split())
ORG_FIRST: frozenset[str] = frozenset("bank university institute ministry department bureau college".split())
NAME_CONNECTORS: frozenset[str] = frozenset("of de da do dos das del della di du la le van von der den".split())
PERSON_TITLES: frozenset[str] = frozenset("mr mrs ms miss dr prof professor sir madam mx".split())
PERSON_CUES: frozenset[str] = frozenset("""
wife husband son daughter child kid mother father mom mum dad brother sister friend colleague boss manager
partner uncle aunt cousin grandma grandpa grandmother grandfather baby boyfriend girlfriend named called
""".split())
FIRST_NAMES: frozenset[str] = frozenset("""
james john robert michael william david richard joseph thomas tom charles chris christopher daniel dan matthew
matt anthony mark donald steven steve paul andrew andy joshua josh kevin brian george timothy tim ronald jason
edward ed jeffrey ryan jacob gary nicholas nick eric jonathan stephen larry justin scott brandon benjamin ben
samuel sam frank gregory raymond alexander alex patrick jack dennis jerry tyler aaron henry peter adam nathan
zachary kyle noah ethan jeremy walter christian keith roger terry sean austin carl arthur lawrence dylan jesse
jordan bryan billy joe bruce gabriel logan albert willie alan juan wayne elijah randy roy vincent ralph eugene
russell bobby mason philip louis liam oliver lucas leo max oscar harry charlie mary patricia jennifer linda
elizabeth barbara susan jessica sarah karen nancy lisa betty margaret sandra ashley kimberly emily donna
michelle dorothy carol amanda melissa deborah stephanie rebecca sharon laura cynthia kathleen amy shirley angela
helen anna brenda pamela nicole emma samantha katherine christine debra rachel catherine carolyn janet ruth
maria heather diane virginia julie joyce victoria olivia kelly christina lauren joan evelyn judith megan cheryl
andrea hannah martha jacqueline frances gloria ann teresa kathryn sara janice jean alice madison doris abigail
julia judy grace denise amber marilyn beverly danielle theresa sophia marie diana brittany natalie isabella
charlotte rose alexis kayla maya mia ava chloe lily ella zoe lucy sophie ellie amelia isla freya jane kate anne
eva laura clara lena nina li wei ming
""".split())
# Capitalised words that start sentences or label things but are not names.
EN_NOT_NAMES: frozenset[str] = frozenset("""
the a an this that these those there here it its i i'm i'll i've i'd my me mine we our us you your he she his
her they their them please hi hello hey dear yes no ok okay sure thanks thank sorry great good nice cool fine
well so and but or if then also however because since while when where what which who whom whose why how do does
did done is are was were be been am will would shall should can could may might must let let's lets note noted
important decision decided constraints constraint update updated heads-up heads next best all any some each
every both either neither none one two three four five six seven eight nine ten first second third last new old
today tomorrow yesterday tonight morning evening afternoon night monday tuesday wednesday thursday friday
saturday sunday january february march april june july august september october november december jan feb mar
apr jun jul aug sep sept oct nov dec before after during just only still already maybe perhaps actually
basically finally anyway besides otherwise instead by for from in on at to of with without about into onto over
under up down out off near via per english chinese portuguese spanish french german italian japanese korean thai
indian american british european asian african mexican russian dutch swiss greek turkish vietnamese canadian
australian irish scottish
""".split())

# --- entities: Chinese --------------------------------------------------------------------------------

ZH_SURNAMES: frozenset[str] = frozenset(
    "王李张刘陈杨黄赵吴周徐孙朱胡郭何罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜程苏魏吕丁任沈姚卢姜崔钟"
    "谭陆汪范廖贾夏韦付邹孟熊秦邱尹薛闫段雷侯史陶贺顾毛郝龚邵钱戴孔汤康施樊葛邢伍庞颜倪庄聂章鲁岳翟殷詹欧"
    "耿焦俞祝阮柯纪梅童凌毕季裴霍涂翁骆蓝辛靳柴鲍喻祁蒲滕屈饶牟卓缪项芦褚娄窦戚岑党晏席瞿佟臧闵邬卞姬栾隋"
    "刁邝"
)
ZH_COMPOUND_SURNAMES: frozenset[str] = frozenset(
    "欧阳 司马 上官 诸葛 东方 皇甫 尉迟 公孙 慕容 长孙 宇文 司徒 令狐 夏侯 端木 独孤 南宫 西门".split()
)
ZH_NAME_PREFIXES: frozenset[str] = frozenset("小老阿")
# Last characters of places and venues that no given name ends with: jieba tags 蓝月谷 and 小馆 as names, and a
# "my phone" said after them was taken to be theirs (supersede then missed the traveller's own new number).
ZH_PLACE_ENDINGS: frozenset[str] = frozenset("谷馆店寺庙塔街巷区县镇村厅场楼阁坊院站港")
# Verbs jieba's HMM glues to the name before them (老葛说, 老葛换, 周带, 梁需 in 后防撞梁需更换): no given name
# ends with one.
ZH_VERB_ENDINGS: frozenset[str] = frozenset("说问送换接要需带戴穿忘给让叫找挠")
# Common words jieba's dictionary tags as names or places (nr/ns/nt): never entities on their own.
ZH_NOT_NAMES: frozenset[str] = frozenset("""
海鲜 过敏 安静 湖畔 临街 明白 武功 文明 小姐 小龙 和尚 王朝 阳光 陆军 道德 卫星 雷达 太后 荣誉 古老 丘陵 言语
冷笑 武林 明星 宫殿 光荣 权威 老太太 师傅 侍卫 帝王 封锁 宣言 胡同 玉米 师兄 顾问 王爷 智慧 王公 白雪 高峰 齐声
祖先 文武 石英 友谊 侍郎 师哥 英勇 高潮 齐全 黄金周 洪水 顾客 公正 凤凰 辛勤 米粉 玉石 寻思 胡子 光辉 青少年
叶子 保健 谢谢 祖宗 宝贝 白领 老公 老婆 红旗 子孙 宝贵 向东 康复 鱼雷 沙滩 师范 诸如 梅花 青青 伯伯 吉祥 范畴
相公 周转 小姑娘 元帅 孙子 宁可 修正 比武 山珍 凌辱 子宫 大侠 高明 陈述 老夫 荣获 丛林 小康 老虎 马匹 双喜 东西
城市 平原 外国 爱国 英雄 朝廷 太阳 哥哥 东南 西北 西南 南北 海洋 湖泊 大桥 高原 上市 美丽 山区 江湖 大街 王国
开国 共和国 城镇 阿哥 庆典 南路 深度 山脉 回国 治安 大国 新鲜 古城 海峡 冰川 长度 山水 长大 莫非 普及 商城 内河
古典 阴阳 江山 高山 大海 山坡 河谷 江边 海边 河边 湖边 市区 郊区 景区 市中心 国际化 社会科学 天文学 音乐会
伦理学 四合院 中西部 中南部 交易所 联合会 商学院 解放区 东 西 南 北 中 小明天 老师 老板 老家 小时 小孩 小区 小吃
阿姨 老人 小朋友 老婆婆 小伙子 小心 老实 小组 小说 小学 老虎 小费 小型 老化 老年 小额 小数 小于 小写 老版 小店
小屋 小巷 高铁 高速 高层 高级 高温 高档 高峰期 金额 金融 金牌 金色 黄色 白色 黄金 白天 白菜 马上 马路 马桶 方便
方法 方面 方案 方向 方式 文件 文化 文字 文本 文档 周末 周边 周围 周期 周年 江南 温度 温泉 安全 安排 安装 安检
常用 常见 关于 关键 关闭 关注 车站 车次 成功 成本 成都人 林荫 石头 钱包 路线 路口 路上 游客 游玩 游泳 时间 时代
时刻 全部 全程 全国 全家 明天 明年 明确 明显 华人 华丽 包括 包含 包装 管理 管道 简单 简介 单独 单人 单号 房间
房价 平安 平台 左右 上海人 北京人 日志 日记 日程 东站 西站 南站 北站
舞美 全表
""".split())
ZH_PLACE_SUFFIXES: frozenset[str] = frozenset("""
酒店 宾馆 饭店 客栈 驿站 民宿 旅馆 公寓 度假村 机场 火车站 高铁站 汽车站 地铁站 站 东站 西站 南站 北站 码头 港
公园 广场 大厦 中心 商场 景区 寺 庙 塔 湖 山 岛 桥 路 街 大街 大道 巷 区 县 市 省 镇 村 餐厅 饭馆 酒家 医院
博物馆 美术馆 体育馆 剧院
""".split())
ZH_ORG_SUFFIXES: frozenset[str] = frozenset("""
公司 集团 银行 大学 学院 学校 中学 小学 研究院 研究所 协会 政府 委员会 基金会 事务所 工作室 出版社 航空 铁路局
""".split())
ZH_PRODUCTS: dict[str, str] = {k: k for k in (
    "微信", "支付宝", "淘宝", "钉钉", "飞书", "抖音", "微博", "高德地图", "百度地图", "携程旅行", "12306", "企业微信",
    "小程序",
)}
ZH_ORGANIZATIONS: dict[str, str] = {k: k for k in (
    "阿里巴巴", "阿里巴巴集团", "腾讯", "百度", "华为", "小米", "字节跳动", "京东", "美团", "携程", "滴滴", "网易",
    "拼多多", "东方航空", "东航", "国航", "中国国航", "南航", "中国南方航空", "中国东方航空", "中国铁路", "中国移动",
    "中国联通", "中国电信",
)}
ZH_PLACES: dict[str, str] = {k: k for k in (
    "外滩", "虹桥", "浦东", "西湖", "陆家嘴", "南京路", "灵隐寺", "雷峰塔", "西溪",
)}

# --- topics: cross-language category labels -----------------------------------------------------------

# label: (whole words, word prefixes, word suffixes, Chinese substrings). English words are casefolded.
TOPIC_CUES: dict[str, tuple[frozenset[str], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {
    label: (frozenset(words.split()), tuple(prefixes.split()), tuple(suffixes.split()), tuple(zh.split()))
    for label, words, prefixes, suffixes, zh in (
        ("travel", "trip trips itinerary itineraries vacation vacations holiday holidays sightseeing journey",
         "travel", "", "旅行 旅游 行程 出行 日游"),
        ("accommodation", "hotel hotels hostel hostels room rooms night nights check-in check-out checkin checkout "
         "check_in check_out suite", "", "", "酒店 住宿 入住 退房 房间 民宿 客栈 宾馆"),
        ("transport", "flight flights airport airports train trains taxi pickup transfer transfers driver airline",
         "", "", "航班 机场 高铁 火车 接站 接机 车次 车票 司机"),
        ("food", "restaurant restaurants food meal meals dinner lunch breakfast dish dishes kitchen kitchens menu",
         "", "", "餐厅 饮食 餐饮 早餐 午餐 晚餐 美食 菜"),
        ("health", "doctor hospital medicine", "allerg medic", "", "过敏 医院 医生 药"),
        ("budget", "budget cost costs price prices pay payment rmb eur gbp usd cny", "", "", "预算 费用 价格 花费 元"),
        ("contact", "phone mobile email e-mail contact", "", "", "电话 手机 号码 邮箱 联系"),
        ("code", "code repository repositories function functions class module modules import dependency "
         "dependencies package packages py views", "", "", "代码 仓库 函数 依赖 模块"),
        ("testing", "test tests pytest testing assert assertion", "", "", "测试 用例"),
        ("database", "database databases sql redis postgres postgresql queryset migration migrations mysql sqlite",
         "", "", "数据库 缓存"),
        ("deployment", "deploy deployment deployed docker ci nginx gunicorn staging production dockerfile kubernetes",
         "", "", "部署 生产环境 上线 实例"),
        ("security", "login password passwords security token tokens", "auth ratelimit rate-limit", "",
         "登录 密码 限流 安全 鉴权"),
        ("error", "error errors exception exceptions traceback", "fail", "error exception", "失败 错误 异常 报错 故障"),
    )
}
