"""SynthNews's data: closed word lists, the parts made-up names are built from, and the
sentence templates of every event kind (whitespace-tokenized; ``{slot}`` is a slot's tokens).

Data only: :mod:`.phrases` compiles these templates, :mod:`.events` fills their slots.
"""


# --------------------------------------------------------------------------------------
# Closed word lists
# --------------------------------------------------------------------------------------
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august",
          "september", "october", "november", "december")
WORD_NUMBERS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten")
ORDINALS = ("second", "third", "fourth", "fifth", "sixth", "seventh", "eighth", "ninth")
SECTORS = (("software", "business software"), ("battery", "batteries"), ("food", "frozen food"),
           ("shipping", "cargo ships"), ("drug", "medicines"), ("chip", "computer chips"),
           ("fashion", "clothing"), ("media", "television shows"),
           ("telecoms", "mobile phone networks"), ("robotics", "factory robots"),
           ("travel", "package holidays"), ("steel", "steel products"),
           ("solar", "solar panels"), ("toy", "toys"), ("insurance", "insurance policies"))
COMPANY_SUFFIXES = ("labs", "group", "systems", "holdings", "industries", "motors", "energy",
                    "foods", "pharma", "networks", "bank", "airlines", "media", "technologies",
                    "partners", "logistics", "materials", "corporation")
CLUB_SUFFIXES = ("united", "city", "rovers", "athletic", "wanderers", "fc", "town", "albion")
VENUE_FORMS = (("", "park"), ("the", "arena"), ("", "stadium"), ("the", "ground"))
STORM_TYPES = ("storm", "hurricane", "typhoon", "cyclone")
PRODUCT_TYPES = (("smartphone", "smartphones"), ("laptop", "laptops"),
                 ("electric car", "electric cars"), ("smartwatch", "smartwatches"),
                 ("tablet", "tablets"), ("games console", "games consoles"),
                 ("drone", "drones"), ("e-bike", "e-bikes"))
PRODUCT_SUFFIXES = ("", "", "pro", "max", "2", "3", "5", "x", "air", "plus")
PARTIES = ("the progressive alliance", "the national party", "the liberal union",
           "the green movement", "the people 's party", "the reform party", "the labour party",
           "the centre party", "the democratic front", "the conservative union")
ISSUES = ("the cost of living", "housing", "corruption", "public health care", "jobs", "crime",
          "climate change", "taxes", "education", "public transport")
PREV_JOBS = ("teacher", "lawyer", "doctor", "journalist", "business owner", "engineer",
             "police officer", "football player", "economist", "nurse")
ELECTION_WORDS = ("a closely fought election", "a run-off vote", "a snap election",
                  "a bitter contest", "a two-round election")
LEAGUES = ("the premier division", "the national league", "the first division",
           "the super league", "the championship")
POSITIONS = (("striker", "strikers"), ("midfielder", "midfielders"), ("defender", "defenders"),
             ("goalkeeper", "goalkeepers"), ("winger", "wingers"))
CASES = (("a patent dispute", "copying its designs"),
         ("a broken supply contract", "breaking a supply contract"),
         ("the use of its brand name", "misusing its brand name"),
         ("pollution from a factory", "polluting a river near its factory"),
         ("unpaid bills", "failing to pay for goods it had ordered"),
         ("a failed merger", "walking away from an agreed merger"),
         ("stolen trade secrets", "stealing trade secrets"))
ANIMALS = ("frog", "beetle", "lizard", "spider", "snail", "bat", "butterfly", "fish", "moth",
           "gecko", "shrimp", "salamander")
FIELDS = ("biology", "zoology", "ecology", "genetics")
JOURNALS = ("nature", "science", "current biology", "the zoological journal", "plos one")
HABITAT_FORMS = ("mountains", "valley", "islands", "forest", "hills", "river delta")
QUARTERS = (("first", "march"), ("second", "june"), ("third", "september"), ("fourth", "december"))
EARNINGS_DIRS = (
    dict(verb="risen", past="rose", adj="stronger", comp="higher", move="climbed",
         reasons=("demand for its products grew", "costs came down", "sales in new markets took off")),
    dict(verb="fallen", past="fell", adj="weaker", comp="lower", move="slipped",
         reasons=("demand slowed", "costs rose sharply", "sales in its home market dropped")),
)
DISTRACTOR_PREFIXES = (("elsewhere", ","), ("in", "other", "news", ","), ("separately", ","),
                       ("meanwhile", ","), ("in", "an", "unrelated", "development", ","))

# --------------------------------------------------------------------------------------
# Templates.  Whitespace-tokenized; ``{slot}`` is replaced by a slot's tokens.
# Every list below holds the phrasings of one sentence role (at least three).
# --------------------------------------------------------------------------------------
QUOTE_FIRST = (
    '" {q} , " said {speaker} , {speaker_role} .',
    '{speaker} , {speaker_role} , said : " {q} . "',
    '" {q} , " {speaker} , {speaker_role} , told reporters .',
    '" {q} , " {speaker} , {speaker_role} , said in a statement .',
)
QUOTE_SECOND = (
    '" {q} , " {speaker_last} added .',
    '{speaker_last} added : " {q} . "',
    '" {q} , " said {speaker_last} .',
    '" {q} . "',
)

ORG_FOUNDED = (
    "{org} was founded in {org_founded} and has its headquarters in {org_city} .",
    "founded in {org_founded} , {org} is based in {org_city} , {org_country} .",
    "{org} , which has its head office in {org_city} , was set up in {org_founded} .",
)
ORG_STAFF = (
    "{org} employs about {org_staff} people .",
    "the company has a workforce of around {org_staff} .",
    "some {org_staff} people work for {org} across {org_country} .",
)

EVENT_TEMPLATES: dict = {}

EVENT_TEMPLATES["acquisition"] = dict(
    core=("buyer", "target", "price"),
    tails=(", the companies said", ", according to a stock market filing", ", people close to the deal said"),
    lead=(
        "{buyer} said on {day} it had agreed to buy {target} for {price} , in one of the largest deals in the {sector} industry this year .",
        "{target} , the {sector} company based in {city} , is to be bought by {buyer} in a deal worth {price} , the two firms announced on {day} .",
        "{buyer} will acquire {target} for {price} , ending months of talks between the two groups , it was announced on {day} .",
        "shares in {target} jumped on {day} after {buyer} agreed to pay {price} for the {sector} firm , which is based in {city} .",
    ),
    context=(
        "the deal still needs the approval of competition regulators in {country} , where both companies have large operations .",
        "both boards have backed the offer , which was first reported by local media last week .",
        "it is the biggest purchase in the history of {buyer} , which has grown mainly by opening new sites .",
    ),
    background=(
        ORG_FOUNDED,
        ORG_STAFF,
        ("{buyer} , which is led by chief executive {ceo} , has been looking for growth outside its home market .",
         "under {ceo} , who became chief executive in {ceo_year} , {buyer} has bought {n_deals} smaller rivals .",
         "{ceo} has run {buyer} since {ceo_year} and has made expansion a priority ."),
        ("{target} makes {products} , selling mainly to customers in {home_market} .",
         "the {sector} business of {target} has grown quickly in recent years , selling {products} to customers in {home_market} .",
         "best known for its {products} , {target} has struggled to compete with larger rivals ."),
        ("talks between the two companies began in {talks_month} , according to people familiar with the matter .",
         "the two sides first discussed a deal in {talks_month} but could not agree on a price at the time .",
         "{buyer} made its first approach to {target} in {talks_month} ."),
    ),
    figures=(
        ("the offer values {target} at {per_share} per share , a premium of {premium} % to its last closing price .",
         "{buyer} is paying {per_share} a share , {premium} % more than the market price before the deal was announced .",
         "the price of {per_share} per share represents a premium of {premium} % on the value of the shares last week ."),
        ("{target} reported revenue of {revenue} last year , up from the year before .",
         "last year {target} had sales of {revenue} and made a small profit .",
         "annual revenue at {target} reached {revenue} in its latest financial year ."),
        ("{buyer} said the deal would save about {savings} a year by {save_year} , mostly by combining offices .",
         "the combined company expects cost savings of {savings} a year by {save_year} .",
         "executives said the merger should cut costs by {savings} a year by {save_year} ."),
    ),
    quotes=(
        "we have admired {target} for a long time and this deal makes us stronger",
        "together we will be able to offer our customers much more",
        "this is a great day for both companies and for our staff",
        "the {sector} industry is changing fast and we intend to lead that change",
        "we will keep the {target} name and its offices in {city}",
    ),
    outlook=(
        "the deal is expected to close in the {quarter} quarter of next year , subject to approval by regulators .",
        "unions at {target} said they would seek talks over the future of its workers .",
        "analysts expect other {sector} firms to look for partners after the deal .",
        "{buyer} said it had no plans to close sites in {city} .",
    ),
    reaction=(
        "investors welcomed the news , sending shares in {buyer} higher in early trading .",
        "some analysts said {buyer} was paying too much for a business that has struggled to grow .",
        "competition lawyers said regulators were likely to look closely at the deal .",
        "staff at {target} were told of the sale at a meeting in {city} .",
    ),
    sum_main=(
        "{buyer} is buying {sector} firm {target} for {price} in a deal announced on {day} .",
        "{target} , {a_sector} company based in {city} , will be taken over by {buyer} in a {price} deal .",
        "{buyer} agrees {price} takeover of {target} , the {sector} group based in {city} .",
        "{buyer} strikes a {price} deal to snap up {target} , the firms said on {day} .",
        "{target} will be taken over by {buyer} in a {price} deal .",
    ),
    sum_figure=(
        "the offer of {per_share} a share is {premium} % above the recent market price of {target} .",
        "{target} , which had sales of {revenue} last year , employs {org_staff} people .",
        "the takeover should save {savings} a year by {save_year} , according to {buyer} .",
        "{target} brought in {revenue} over the past year and was founded in {org_founded} .",
        "{target} was set up in {org_founded} and has a staff of {org_staff} .",
        "the price works out at {per_share} per share , a {premium} % premium .",
        "{target} has {org_staff} employees .",
        "{target} had revenue of {revenue} .",
        "costs will fall by {savings} a year , the buyer says .",
    ),
    sum_extra=(
        "{ceo} , the boss of {buyer} , is behind the deal and has run the company since {ceo_year} .",
        "regulators in {country} must still give their approval before the takeover can go ahead .",
        "{target} is best known for its {products} and sells mostly in {home_market} .",
        "{ceo} has been in charge at {buyer} since {ceo_year} .",
        "the firms first held talks in {talks_month} .",
    ),
)

EVENT_TEMPLATES["match_result"] = dict(
    core=("winner", "loser", "score"),
    tails=(", according to club officials", ", the league said", ", local media reported"),
    lead=(
        "{winner} beat {loser} {score} in {league} on {day} , with {scorer} scoring the decisive goal late in the second half .",
        "{scorer} was the hero as {winner} came from behind to defeat {loser} {score} on {day} in front of a packed stadium .",
        "{loser} suffered a {score} defeat at the hands of {winner} in {league} on {day} , their worst result of the season .",
        "{winner} claimed a {score} victory over {loser} on {day} to keep their hopes of winning {league} alive .",
    ),
    context=(
        "the match was played at {venue} in {city} in heavy rain .",
        "it was the {streak} straight win in all competitions for {winner} , who have not lost since the autumn .",
        "the result leaves {loser} in the bottom half of the table with the season entering its final weeks .",
    ),
    background=(
        ("{winner} , who last won the title in {title_year} , have struggled for consistency this season .",
         "{winner} were champions in {title_year} but have not won a trophy since .",
         "the last league title for {winner} came in {title_year} , and fans have waited a long time for another ."),
        ("{coach} took charge of {winner} in {coach_year} after a spell in {coach_country} .",
         "{coach} , appointed in {coach_year} , has rebuilt the {winner} squad around young players .",
         "{winner} coach {coach} has been in the job since {coach_year} and signed a new contract last year ."),
        ("{scorer} joined {winner} from a club in {scorer_country} in {scorer_year} .",
         "{scorer} , signed in {scorer_year} from a club in {scorer_country} , has become a key player for {winner} .",
         "{winner} brought {scorer} to the club in {scorer_year} ."),
        ("{loser} had been unbeaten in {loser_run} games before the match .",
         "before kick-off , {loser} , coached by {loser_coach} , had gone {loser_run} games without defeat .",
         "{loser} arrived with a run of {loser_run} matches unbeaten behind them ."),
    ),
    figures=(
        ("a crowd of {attendance} watched the match at {venue} .",
         "the game was watched by {attendance} fans , a record for the ground this season .",
         "{attendance} supporters were inside {venue} for the match ."),
        ("{scorer} has now scored {goals} goals this season .",
         "{scorer} took his tally for the season to {goals} , more than any other player at the club .",
         "that makes {goals} goals in all competitions this season for {scorer} ."),
        ("{winner} now have {points} points from {games} games .",
         "the win lifts {winner} to {points} points after {games} matches .",
         "with {games} games played , {winner} sit on {points} points ."),
    ),
    quotes=(
        "the players showed great character today",
        "we knew {loser} would make it difficult for us",
        "{scorer_last} was outstanding and deserved his goal",
        "it is three points and that is all that matters",
        "we still have a lot of work to do before the end of the season",
    ),
    outlook=(
        "{winner} face {next_opp} next {next_day} .",
        "{loser} will look to bounce back at home next week .",
        "the two sides meet again in the cup later this season .",
        "{winner} travel to {next_opp} in their next game .",
    ),
    reaction=(
        "fans of {loser} booed their team off the pitch at full time .",
        "{loser} coach {loser_coach} said his side had been punished for their mistakes .",
        "pundits praised {winner} for their attacking play and their work rate .",
        "{loser_coach} admitted that {loser} had been second best for most of the game .",
    ),
    sum_main=(
        "{winner} won {score} against {loser} in {league} on {day} .",
        "{loser} were beaten {score} by {winner} in {league} , ending a run of {loser_run} games without defeat .",
        "{winner} overcame {loser} {score} , with {scorer} on target for the home side .",
        "{scorer} scored as {winner} saw off {loser} {score} on {day} .",
        "{winner} won {score} against {loser} .",
    ),
    sum_figure=(
        "{scorer} now has {goals} goals for the campaign after his strike against {loser} .",
        "the match drew a crowd of {attendance} to {venue} in {city} .",
        "{winner} are on {points} points after {games} matches .",
        "{attendance} people were at the game , and {scorer} has {goals} goals this term .",
        "{winner} have {points} points .",
        "{winner} last lifted the title in {title_year} .",
        "{scorer} , who moved from {scorer_country} in {scorer_year} , has {goals} goals this season .",
    ),
    sum_extra=(
        "{coach} praised his players after the match .",
        "{winner} play {next_opp} in their next game .",
        "the game took place at {venue} in {city} .",
        "{coach} has managed {winner} since {coach_year} .",
    ),
)

EVENT_TEMPLATES["election"] = dict(
    core=("winner", "office_full", "rival"),
    tails=(", the electoral commission said", ", according to official results", ", state media reported"),
    lead=(
        "{winner} has been elected {office_full} , beating {rival} in a vote held on {day} after a long and bitter campaign .",
        "{rival} conceded defeat on {day} after {winner} of {party} won the race to become {office_full} .",
        "{winner} will be the next {office_full} after defeating {rival} in {election_word} on {day} .",
        "official results on {day} showed {winner} comfortably ahead of {rival} in the contest for {office_full} .",
    ),
    context=(
        "turnout was higher than at the last election in {last_year} , with long queues outside polling stations .",
        "the result ends {years_word} years in power for {rival_party} .",
        "{winner} will be sworn in next month and is expected to name a new team within days .",
    ),
    background=(
        ("{winner} , {age} , is a former {prev_job} who entered politics in {entry_year} .",
         "before running for office , {winner} worked as {a_prev_job} in {home_city} .",
         "{winner} , who grew up in {home_city} , first won a seat in parliament in {entry_year} ."),
        ("{rival} had led in opinion polls for most of the campaign .",
         "{rival} , the candidate of {rival_party} , had been seen as the favourite until the final weeks of the race .",
         "for {rival_party} , which picked {rival} as its candidate , the defeat is a heavy blow ."),
        ("the campaign was dominated by debates over {issue} .",
         "{issue} was the main concern for many voters , according to polls .",
         "both candidates promised action on {issue} during the campaign ."),
        ("the previous election , in {last_year} , was won by {last_winner} .",
         "in {last_year} , {last_winner} won the election comfortably .",
         "the last vote , held in {last_year} , returned {last_winner} to power ."),
    ),
    figures=(
        ("{winner} won {win_share} % of the vote , against {rival_share} % for {rival} .",
         "final figures gave {winner} {win_share} % and {rival} {rival_share} % .",
         "with all votes counted , {winner} had {win_share} % to {rival_share} % for {rival} ."),
        ("turnout was {turnout} % , according to the electoral commission .",
         "the electoral commission put turnout at {turnout} % .",
         "some {turnout} % of registered voters cast a ballot ."),
        ("the margin of victory was {margin} votes .",
         "{winner} finished {margin} votes ahead .",
         "just {margin} votes separated the two candidates ."),
    ),
    quotes=(
        "tonight the people of {region} have chosen change",
        "i will govern for everyone , including those who did not vote for me",
        "the hard work starts tomorrow",
        "we ran a campaign about {issue} and the voters listened",
        "i want to thank every volunteer who worked on this campaign",
    ),
    outlook=(
        "{winner} will take office on {inaug_date} .",
        "the new {office} faces an early test over {issue} .",
        "{rival} said {rival_party} would now rebuild in opposition .",
        "coalition talks are expected to begin within days .",
    ),
    reaction=(
        "supporters of {winner} celebrated in the streets of {capital} until late at night .",
        "international observers said the vote had been free and fair .",
        "leaders of neighbouring countries sent their congratulations to {winner} .",
        "markets in {country} rose slightly after the result was announced .",
    ),
    sum_main=(
        "{winner} is the new {office_full} after seeing off {rival} in the vote on {day} .",
        "{rival} lost to {winner} in the election for {office_full} , held on {day} .",
        "{winner} defeats {rival} to win the post of {office_full} for {party} .",
        "voters pick {winner} over {rival} as {office_full} after a campaign about {issue} .",
        "{winner} is the new {office_full} after seeing off {rival} .",
    ),
    sum_figure=(
        "{winner} took {win_share} % of votes cast , while {rival} got {rival_share} % .",
        "{turnout} % of voters took part in the election .",
        "{winner} won by a margin of {margin} votes .",
        "{winner} , a former {prev_job} , is {age} years old and went into politics in {entry_year} .",
        "{winner} secured {win_share} % and turnout was {turnout} % .",
        "{winner} secured {win_share} % .",
    ),
    sum_extra=(
        "{winner} takes office on {inaug_date} .",
        "{issue} dominated the campaign .",
        "{winner} stood for {party} .",
        "{winner} has been in politics since {entry_year} .",
        "{last_winner} had won the previous vote in {last_year} .",
    ),
)

EVENT_TEMPLATES["storm"] = dict(
    core=("storm", "city", "day"),
    tails=(", officials said", ", according to the weather service", ", local media reported"),
    lead=(
        "{storm} hit {city} on {day} , killing {dead} people and forcing thousands from their homes .",
        "{storm} made landfall near {city} on {day} , bringing heavy rain and flooding to the coast of {country} .",
        "at least {dead} people were killed when {storm} swept through {city} on {day} , tearing roofs from buildings .",
        "{storm} tore through {city} on {day} , flattening trees and cutting power across the region .",
    ),
    context=(
        "the storm later weakened as it moved inland , but rivers continued to rise .",
        "schools and airports across {country} were closed and trains were cancelled .",
        "forecasters had warned of the danger several days earlier .",
    ),
    background=(
        ("it is the strongest storm to hit {country} since {last_storm_year} .",
         "{city} was last hit by a major storm in {last_storm_year} , when large parts of the city were flooded .",
         "the region has not seen a storm of this strength since {last_storm_year} ."),
        ("{city} , a port city of about {city_pop} people , sits on a low-lying coast .",
         "{city} is home to around {city_pop} people , many living close to the sea .",
         "about {city_pop} people live in {city} , one of the largest cities in {country} ."),
        ("{official} , who heads the national disaster agency , had ordered evacuations on {prev_day} .",
         "evacuation orders were issued on {prev_day} by {official} , the head of the disaster agency .",
         "the disaster agency , led by {official} , began moving people away from the coast on {prev_day} ."),
        ("meteorologists said warm sea temperatures had helped the storm gain strength .",
         "the storm formed over the ocean {form_days} days ago and grew quickly .",
         "{storm} had been upgraded to the highest warning level on {prev_day} ."),
    ),
    figures=(
        ("winds reached {wind} kilometres per hour at their peak .",
         "gusts of up to {wind} kilometres per hour were recorded in {city} .",
         "the weather service measured wind speeds of {wind} kilometres per hour ."),
        ("some {homes} homes were left without power .",
         "power cuts hit {homes} homes across the region .",
         "the electricity company said {homes} customers had lost power ."),
        ("{evacuated} people had been moved to emergency shelters .",
         "authorities evacuated {evacuated} residents from coastal areas .",
         "more than {evacuated} people spent the night in shelters ."),
        ("up to {rain} millimetres of rain fell in {hours} hours .",
         "{rain} millimetres of rain were recorded in just {hours} hours .",
         "in {hours} hours , {rain} millimetres of rain fell on the city ."),
    ),
    quotes=(
        "our teams are working around the clock to reach those in need",
        "this is the worst storm many of us have seen",
        "we urge people to stay indoors until the warning is lifted",
        "the damage in {city} is severe",
        "we will rebuild , but it will take time",
    ),
    outlook=(
        "more rain is expected over the coming days .",
        "the government has promised emergency funding for {city} .",
        "officials warned that the death toll could rise .",
        "engineers hope to restore power to most homes within a week .",
    ),
    reaction=(
        "residents described hearing the wind roar through the night .",
        "aid groups said they were sending food and water to the region .",
        "neighbouring countries offered help to {country} .",
        "images on social media showed streets in {city} under water .",
    ),
    sum_main=(
        "{storm} struck {city} on {day} , causing widespread damage along the coast .",
        "{city} was battered by {storm} on {day} , leaving {dead} people dead .",
        "{storm} has left {dead} people dead in {city} after reaching land on {day} .",
        "deadly {storm} brings floods to {city} in {country} .",
        "{storm} struck {city} on {day} .",
    ),
    sum_figure=(
        "winds of {wind} kilometres per hour were recorded as the storm came ashore .",
        "{homes} homes lost electricity and {evacuated} people fled to shelters .",
        "{evacuated} people were evacuated from their homes .",
        "{rain} millimetres of rain fell in the space of {hours} hours .",
        "{homes} homes had no electricity .",
        "it is the worst storm in {country} since {last_storm_year} .",
        "{city} , which has {city_pop} inhabitants , had not been hit so hard since {last_storm_year} .",
    ),
    sum_extra=(
        "{official} said emergency teams were working to help .",
        "{city} has a population of {city_pop} .",
        "the disaster agency had told people to leave on {prev_day} .",
        "the storm weakened once it moved inland .",
    ),
)

EVENT_TEMPLATES["court_ruling"] = dict(
    core=("court", "plaintiff", "defendant"),
    tails=(", court documents show", ", according to the judgment", ", lawyers said"),
    lead=(
        "{court} ruled on {day} that {defendant} must pay damages to {plaintiff} over {case_subject} .",
        "{plaintiff} has won its case against {defendant} after {court} found in its favour on {day} .",
        "in a ruling on {day} , {court} sided with {plaintiff} in its long-running dispute with {defendant} over {case_subject} .",
        "{defendant} lost a legal battle with {plaintiff} on {day} when {court} rejected its arguments .",
    ),
    context=(
        "the ruling cannot be appealed , lawyers for both sides said .",
        "{defendant} said it was studying the decision and would comment later .",
        "the case had been closely watched by the industry .",
    ),
    background=(
        ("the dispute began in {case_start} when {plaintiff} accused {defendant} of {accusation} .",
         "{plaintiff} first took {defendant} to court in {case_start} , accusing it of {accusation} .",
         "the case dates back to {case_start} , when {plaintiff} said {defendant} had been {accusation} ."),
        ("judge {judge} , who wrote the main opinion , has sat on the court since {judge_year} .",
         "the decision was written by judge {judge} , a member of the court since {judge_year} .",
         "judge {judge} , appointed in {judge_year} , led the panel that heard the case ."),
        ORG_FOUNDED,
        ORG_STAFF,
    ),
    figures=(
        ("{defendant} was ordered to pay {damages} in damages .",
         "the court set damages at {damages} , far more than {defendant} had expected .",
         "the award of {damages} is one of the largest of its kind ."),
        ("the judges voted {vote} in favour of {plaintiff} .",
         "the decision was taken by a majority of {vote} .",
         "the panel of judges split {vote} ."),
        ("the case lasted {case_years} years and produced a judgment of {pages} pages .",
         "the judgment runs to {pages} pages , ending a fight that lasted {case_years} years .",
         "after {case_years} years in the courts , the judges delivered a ruling of {pages} pages ."),
    ),
    quotes=(
        "this ruling sends a clear message to the whole industry",
        "justice has finally been done",
        "our client has waited a long time for this day",
        "we always believed the law was on our side",
        "nobody is above the law , not even a company the size of {defendant}",
    ),
    outlook=(
        "{defendant} has {pay_days} days to pay .",
        "lawyers expect similar cases to follow .",
        "{defendant} said it would review its practices .",
        "the ruling may open the door to claims from other firms .",
    ),
    reaction=(
        "shares in {defendant} fell after the ruling .",
        "legal experts said the decision would change how such disputes are handled in {country} .",
        "business groups said they were worried by the size of the award .",
        "supporters of {plaintiff} gathered outside the court in {city} .",
    ),
    sum_main=(
        "{defendant} lost its case against {plaintiff} at {court} on {day} .",
        "{plaintiff} won a legal fight with {defendant} over {case_subject} at {court} .",
        "judges at {court} backed {plaintiff} against {defendant} in a ruling on {day} .",
        "{court} found against {defendant} in a row with {plaintiff} over {case_subject} .",
        "judges at {court} backed {plaintiff} against {defendant} .",
    ),
    sum_figure=(
        "{defendant} must hand over {damages} to its rival .",
        "the judges were split {vote} , and the case went on for {case_years} years .",
        "the battle in the courts went on for {case_years} years .",
        "{damages} was awarded to {plaintiff} by a majority of {vote} .",
        "the row started in {case_start} when {plaintiff} accused {defendant} of {accusation} .",
        "{damages} was awarded to {plaintiff} .",
    ),
    sum_extra=(
        "judge {judge} , who joined the court in {judge_year} , wrote the ruling .",
        "{lawyer} , who acts for {plaintiff} , welcomed the verdict .",
        "{plaintiff} had accused {defendant} of {accusation} .",
        "{defendant} has {pay_days} days to pay up .",
    ),
)

EVENT_TEMPLATES["product_launch"] = dict(
    core=("company", "product"),
    tails=(", the company said", ", according to the company", ", executives said"),
    lead=(
        "{company} unveiled the {product} , its new {ptype} , at an event in {city} on {day} .",
        "{company} has launched the {product} , {a_ptype} it hopes will win back customers , the company said on {day} .",
        "the {product} , {a_ptype} from {company} , was shown to the public for the first time on {day} at a packed event in {city} .",
        "{company} took the wraps off its latest {ptype} , the {product} , on {day} .",
    ),
    context=(
        "the launch had been expected for months , after details leaked online in the spring .",
        "it is the first new product from {company} in two years .",
        "hundreds of journalists attended the event in {city} .",
    ),
    background=(
        ORG_FOUNDED,
        ORG_STAFF,
        ("{company} has lost ground to rivals such as {rival} in recent years .",
         "the market for {ptypes} is dominated by {rival} , which sells millions every year .",
         "{rival} currently sells more {ptypes} than any other company ."),
        ("{ceo} , who became chief executive of {company} in {ceo_year} , has promised a string of new products .",
         "since {ceo} took over in {ceo_year} , {company} has cut costs and focused on design .",
         "the launch is the biggest test yet for {ceo} , boss of {company} since {ceo_year} ."),
    ),
    figures=(
        ("the {product} will cost {price} .",
         "prices start at {price} for the basic model .",
         "{company} will sell the {product} for {price} ."),
        ("the battery lasts up to {battery} hours .",
         "{company} says the battery will last {battery} hours .",
         "a full charge gives {battery} hours of use ."),
        ("the company said it had already taken {preorders} orders .",
         "{preorders} customers have placed orders .",
         "more than {preorders} orders came in during the first day ."),
    ),
    quotes=(
        "this is the best {ptype} we have ever made",
        "we listened to our customers and built what they asked for",
        "the {product} will change how people think about {ptypes}",
        "we are very proud of the team behind it",
        "there is nothing else like it on the market",
    ),
    outlook=(
        "the {product} goes on sale in {n_countries} countries on {release_date} .",
        "{company} plans a cheaper version next year .",
        "analysts will watch early sales closely .",
        "the {product} will be available in shops from {release_date} .",
    ),
    reaction=(
        "reviewers praised the design but questioned the price .",
        "shares in {company} rose {share_rise} % after the event .",
        "fans queued outside the venue in {city} for hours before the doors opened .",
        "some analysts said the {product} offered little that was new .",
    ),
    sum_main=(
        "{company} has revealed a new {ptype} called the {product} at a launch in {city} .",
        "the {product} is the latest {ptype} from {company} , which showed it off on {day} .",
        "{company} shows off its {product} {ptype} , hoping to win back customers .",
        "new {ptype} from {company} is named the {product} and was presented on {day} .",
        "the {product} is the latest {ptype} from {company} .",
    ),
    sum_figure=(
        "the {product} is priced at {price} and its battery can run for {battery} hours .",
        "its battery can run for {battery} hours on a single charge .",
        "{preorders} people have already ordered one .",
        "it will set buyers back {price} .",
        "{company} , which dates back to {org_founded} , is based in {org_city} .",
        "{company} has a workforce of {org_staff} .",
    ),
    sum_extra=(
        "it will be available from {release_date} in {n_countries} countries .",
        "{ceo} has been in charge of {company} since {ceo_year} .",
        "{company} faces strong competition from {rival} .",
        "it will be sold in {n_countries} countries .",
    ),
)

EVENT_TEMPLATES["player_transfer"] = dict(
    core=("player", "from_club", "to_club"),
    tails=(", the club said", ", according to local media", ", reports said"),
    lead=(
        "{to_club} have signed {player} from {from_club} , the clubs confirmed on {day} .",
        "{player} has completed a move from {from_club} to {to_club} , ending weeks of speculation about the future of the {position} .",
        "{from_club} have agreed to sell {player} to {to_club} , with a medical set for {day} .",
        "{to_club} completed the signing of {player} on {day} , prising the {position} away from {from_club} .",
    ),
    context=(
        "the deal was announced on the website of {to_club} .",
        "{player} will wear the number {shirt} shirt .",
        "fans had been expecting the move for weeks .",
    ),
    background=(
        ("{player} , {age} , joined {from_club} in {joined_year} .",
         "{player} , who is {age} , moved to {from_club} in {joined_year} .",
         "since arriving at {from_club} in {joined_year} , {player} has become one of the best {positions} in the league ."),
        ("{player} has played {caps} times for {player_country} .",
         "the {player_country} international has won {caps} caps .",
         "{player} has {caps} caps for {player_country} ."),
        ("{to_coach} has been looking for a new {position} since the summer .",
         "{to_club} coach {to_coach} had made the {position} his top target .",
         "{to_coach} , in charge of {to_club} since {coach_year} , wanted a new {position} ."),
        ("{player} was named player of the season at {from_club} in {award_year} .",
         "in {award_year} , {player} was voted the best player at {from_club} .",
         "{player} won the player of the year award at {from_club} in {award_year} ."),
    ),
    figures=(
        ("the fee is understood to be {fee} .",
         "{to_club} paid {fee} for the {position} .",
         "the transfer is worth {fee} , according to reports ."),
        ("{player} has signed a {contract} contract .",
         "the {position} agreed a {contract} deal .",
         "{player} put pen to paper on a {contract} contract ."),
        ("{player} scored {goals} goals for {from_club} last season .",
         "last season , {player} found the net {goals} times .",
         "{goals} goals last season made {player} one of the top scorers in the league ."),
    ),
    quotes=(
        "{player_last} is exactly the kind of player we needed",
        "we have followed {player_last} for a long time",
        "i am delighted to welcome him to the club",
        "he will make us stronger straight away",
        "this is a big moment for {to_club}",
    ),
    outlook=(
        "{player} could make a debut against {next_opp} on {next_day} .",
        "{from_club} are expected to use the money to strengthen their squad .",
        "the transfer window closes at the end of the month .",
        "{player} will train with his new team-mates for the first time this week .",
    ),
    reaction=(
        "fans of {from_club} reacted angrily to the sale .",
        "{to_club} supporters welcomed the signing on social media .",
        "former players said the fee was too high .",
        "the move was the talk of {city} on {day} .",
    ),
    sum_main=(
        "{player} joins {to_club} from {from_club} after weeks of speculation .",
        "{from_club} sell {player} to {to_club} , the clubs confirmed on {day} .",
        "{player} leaves {from_club} for {to_club} , where he will wear the number {shirt} .",
        "{to_club} land {position} {player} from {from_club} .",
        "{player} joins {to_club} from {from_club} .",
    ),
    sum_figure=(
        "{to_club} are paying {fee} for the player .",
        "{player} signs a {contract} deal with his new club .",
        "{player} hit {goals} goals last season for {from_club} .",
        "the deal costs {to_club} {fee} and runs for a {contract} term .",
        "{player} is {age} and has {caps} caps for {player_country} .",
        "{player} was player of the season in {award_year} .",
    ),
    sum_extra=(
        "{to_coach} says {player_last} will make his side stronger .",
        "{player} could debut against {next_opp} .",
        "{player} had been at {from_club} since {joined_year} .",
        "{player} has represented {player_country} {caps} times .",
    ),
)

EVENT_TEMPLATES["scientific_discovery"] = dict(
    core=("university", "dname", "animal"),
    tails=(", the researchers said", ", according to the study", ", the team reported"),
    lead=(
        "scientists at {university} say they have discovered a new species of {animal} , which they have named {dname} .",
        "a team from {university} has identified a new species of {animal} , called {dname} , according to a study published on {day} .",
        "{dname} , a {animal} never seen before , has been described for the first time by researchers at {university} .",
        "researchers at {university} announced on {day} the discovery of a new {animal} , now known as {dname} .",
    ),
    context=(
        "the findings appear in the journal {journal} .",
        "the discovery was made in {place} , far from the nearest road .",
        "the team spent years on the project .",
    ),
    background=(
        ("{scientist} , who led the study , has worked at {university} since {sci_year} .",
         "the research was led by {scientist} , an expert in {field} who joined {university} in {sci_year} .",
         "{scientist} has studied {field} at {university} since {sci_year} ."),
        ("{university} was founded in {uni_founded} and has around {students} students .",
         "founded in {uni_founded} , {university} now teaches about {students} students .",
         "{university} , set up in {uni_founded} , is one of the oldest in {country} ."),
        ("the work was funded by {funder} .",
         "{funder} paid for the expedition .",
         "money for the project came from {funder} ."),
        ("{place} , a remote area of {country} , is known for its rich wildlife .",
         "few scientists have worked in {place} , which can only be reached on foot .",
         "the expedition to {place} , in {country} , lasted {trip_weeks} weeks ."),
    ),
    figures=(
        ("{dname} is just {size} centimetres long .",
         "the {animal} measures about {size} centimetres .",
         "adults grow to {size} centimetres ."),
        ("the team examined {n_samples} specimens over {study_years} years .",
         "the study drew on {n_samples} specimens collected over {study_years} years .",
         "over {study_years} years , researchers looked at {n_samples} specimens ."),
        ("fewer than {population} are thought to survive in the wild .",
         "the scientists estimate that only {population} remain .",
         "the total population may be as small as {population} ."),
    ),
    quotes=(
        "we could hardly believe what we were seeing",
        "{dname} shows how much we still have to learn about {place}",
        "finding a new {animal} like this is incredibly rare",
        "we hope this will help protect the wildlife of {place}",
        "there are surely more species waiting to be found",
    ),
    outlook=(
        "the team plans to return to {place} next year .",
        "conservation groups have called for the area to be protected .",
        "further studies will examine how {dname} survives .",
        "the researchers want {dname} to be listed as endangered .",
    ),
    reaction=(
        "other scientists welcomed the findings .",
        "{funder} said it would fund further work .",
        "local officials in {country} said they were proud of the discovery .",
        "wildlife groups said the discovery showed the value of the region .",
    ),
    sum_main=(
        "a new {animal} named {dname} has been found by scientists from {university} .",
        "{university} researchers describe a newly discovered {animal} , {dname} , in a study out on {day} .",
        "{dname} is a {animal} previously unknown to science , say experts from {university} .",
        "experts at {university} find {dname} , a new kind of {animal} , in {place} .",
        "{dname} is a {animal} previously unknown to science .",
    ),
    sum_figure=(
        "the creature is only {size} centimetres long .",
        "{n_samples} specimens were studied over a period of {study_years} years .",
        "only around {population} may be left in the wild .",
        "the creature grows to {size} centimetres and as few as {population} survive .",
        "{scientist} of {university} was in charge of the study .",
        "{university} has {students} students and dates from {uni_founded} .",
    ),
    sum_extra=(
        "the study was led by {scientist} .",
        "it was found in {place} .",
        "the work appears in {journal} .",
        "the project was paid for by {funder} .",
    ),
)

EVENT_TEMPLATES["labour_strike"] = dict(
    core=("union", "employer"),
    tails=(", the union said", ", according to the company", ", local media reported"),
    lead=(
        "members of {union} went on strike at {employer} on {day} after talks over pay broke down .",
        "{union} began a strike at {employer} on {day} , saying wages had failed to keep up with rising prices .",
        "a strike by {union} shut down {employer} on {day} , the first walkout at the company in years .",
        "workers at {employer} , represented by {union} , walked out on {day} in a dispute over pay .",
    ),
    context=(
        "picket lines formed outside the main site of the company in {city} .",
        "managers said they were disappointed by the decision and urged staff to return .",
        "customers were warned to expect delays .",
    ),
    background=(
        ("{union} represents most of the workers at {employer} .",
         "{union} , led by {leader} , has grown rapidly in recent years .",
         "{leader} became head of {union} in {leader_year} ."),
        ORG_FOUNDED,
        ORG_STAFF,
        ("the last strike at {employer} was in {last_strike} .",
         "relations between the two sides have been poor since a dispute in {last_strike} .",
         "workers at {employer} last stopped work in {last_strike} ."),
    ),
    figures=(
        ("around {strikers} workers are taking part .",
         "{strikers} staff joined the walkout .",
         "the union says {strikers} members have stopped work ."),
        ("{union} is asking for a rise of {demand} % , while {employer} has offered {offer} % .",
         "the company offered {offer} % , well short of the {demand} % the union wants .",
         "the gap between the {offer} % offer and the {demand} % demand remains wide ."),
        ("each day of the strike costs {employer} about {cost} , analysts estimate .",
         "the walkout is costing {cost} a day .",
         "analysts put the daily cost at {cost} ."),
    ),
    quotes=(
        "our members have been left with no choice",
        "we want a fair deal , nothing more",
        "the company can afford to pay and it knows it",
        "we are ready to talk at any time",
        "nobody wants to strike , but enough is enough",
    ),
    outlook=(
        "the strike is due to last {strike_days} days .",
        "talks are set to resume next week .",
        "the government has urged both sides to return to talks .",
        "{union} warned of further action if no deal is reached .",
    ),
    reaction=(
        "customers faced long delays as a result of the action .",
        "business groups said the strike would hurt the economy of {country} .",
        "other unions said they supported the workers .",
        "shares in {employer} fell as the walkout began .",
    ),
    sum_main=(
        "staff at {employer} are on strike over pay after the collapse of talks with {union} .",
        "{union} members stop work at {employer} in a row over wages that began on {day} .",
        "{employer} hit by a walkout called by {union} over pay .",
        "pay dispute leads to strike by {union} at {employer} , based in {city} .",
        "{employer} hit by a walkout called by {union} .",
    ),
    sum_figure=(
        "{strikers} people have downed tools .",
        "the union wants {demand} % but has been offered {offer} % .",
        "the stoppage costs {employer} {cost} every day .",
        "{strikers} workers are out and the company is losing {cost} a day .",
        "the previous strike there was in {last_strike} .",
        "{employer} , founded in {org_founded} , has a workforce of {org_staff} .",
    ),
    sum_extra=(
        "{leader} says members had no choice .",
        "the stoppage could last {strike_days} days .",
        "{leader} has led {union} since {leader_year} .",
        "{employer} is based in {org_city} .",
    ),
)

EVENT_TEMPLATES["earnings"] = dict(
    core=("company",),
    tails=(", the company said", ", according to a statement", ", analysts said"),
    lead=(
        "{company} said on {day} that its profits had {dir_verb} in the {quarter} quarter , as {reason} .",
        "profits at {company} {dir_past} in the three months to {quarter_end} , the firm reported on {day} .",
        "{company} reported {dir_adj} results for the {quarter} quarter on {day} , saying {reason} .",
        "quarterly profits at {company} have {dir_verb} , the company told investors on {day} .",
    ),
    context=(
        "shares in {company} {dir_move} in early trading .",
        "{company} also confirmed its forecast for the full year .",
        "the figures were released before the market opened in {city} .",
    ),
    background=(
        ORG_FOUNDED,
        ORG_STAFF,
        ("{ceo} has been chief executive since {ceo_year} .",
         "the company has been run by {ceo} since {ceo_year} .",
         "{ceo} , who took the top job in {ceo_year} , has pushed {company} into new markets ."),
        ("{company} makes {products} and sells its products in more than {n_markets} countries .",
         "best known for its {products} , {company} sells in {n_markets} countries .",
         "{company} , a maker of {products} , operates in {n_markets} countries ."),
    ),
    figures=(
        ("net profit was {profit} , {change} % {dir_comp} than a year earlier .",
         "{company} made a profit of {profit} in the quarter , {change} % {dir_comp} than last year .",
         "profit came in at {profit} , a change of {change} % on the same period a year ago ."),
        ("revenue reached {revenue} .",
         "sales totalled {revenue} in the quarter .",
         "quarterly revenue was {revenue} ."),
        ("the company now has {customers} customers .",
         "{company} said it now serves {customers} customers .",
         "customer numbers stood at {customers} at the end of the quarter ."),
    ),
    quotes=(
        "we are focused on the long term",
        "our priority is to serve our customers well",
        "the coming months will be important for us",
        "we have a clear plan for growth",
        "we know there is more work to do",
    ),
    outlook=(
        "{company} will announce full-year results in {results_month} .",
        "analysts expect conditions in the {sector} industry to remain difficult .",
        "the company plans to open new offices in {city2} .",
        "{company} said it would keep investing in new products .",
    ),
    reaction=(
        "analysts said the figures were broadly in line with forecasts .",
        "trading in shares of {company} was heavy .",
        "rival firms will report their results next week .",
        "investors will be watching for signs of change at {company} .",
    ),
    sum_main=(
        "{company} posts {dir_adj} figures for the {quarter} quarter , saying {reason} .",
        "quarterly profit {dir_past} at {company} in the three months to {quarter_end} .",
        "{company} sees profits {dir_move} in the {quarter} quarter , it told investors on {day} .",
        "a {dir_adj} quarter for {company} , whose profits {dir_past} .",
        "quarterly profit {dir_past} at {company} .",
    ),
    sum_figure=(
        "it made {profit} , {change} % {dir_comp} than last year .",
        "the firm brought in {revenue} over the three months .",
        "{company} has {customers} customers .",
        "profit of {profit} came on revenue of {revenue} .",
        "{company} has about {org_staff} staff and was founded in {org_founded} .",
        "{company} sells {products} in {n_markets} countries .",
    ),
    sum_extra=(
        "{company} is led by {ceo} , who took over in {ceo_year} .",
        "{company} was founded in {org_founded} .",
        "full-year results are due in {results_month} .",
        "{company} is expanding to {city2} .",
    ),
)

# --------------------------------------------------------------------------------------
# More about the same event, for "synthnews-long" only (the short articles never use these):
# an analysis paragraph (what the event means), a history paragraph (how it came about), a
# wider paragraph (the industry, league or country around it) and a comment paragraph in
# which an outside observer (a person made for the article) is quoted.
# None of these sentences states a number or a date, and the only new name is the observer's
# (never a key fact): the figures and background paragraphs, wherever they fall in the
# article, keep the facts a summary needs.
# --------------------------------------------------------------------------------------
OBSERVER_FIRST = (
    '" {q} , " said {observer} , {observer_role} .',
    '{observer} , {observer_role} , said : " {q} . "',
    '" {q} , " {observer} , {observer_role} , told reporters .',
)
OBSERVER_SECOND = (
    '" {q} , " {observer_last} added .',
    '{observer_last} added : " {q} . "',
    '" {q} , " said {observer_last} .',
    '" {q} . "',
)

LONG_EVENT_TEMPLATES: dict = {}

LONG_EVENT_TEMPLATES["acquisition"] = dict(
    wider=(
        "the {sector} industry has seen a wave of deals as companies look for ways to grow .",
        "rising costs have squeezed smaller {sector} firms , making many of them easier targets .",
        "regulators in several countries have become more cautious about large mergers .",
        "many companies in the industry are sitting on large amounts of cash .",
        "demand for {products} has grown steadily in recent years .",
        "deal activity in {country} has picked up after a slow start to the year .",
    ),
    analysis=(
        "the deal would make {buyer} one of the biggest players in the {sector} industry .",
        "for {target} , the sale ends years of doubt about its future as an independent company .",
        "dealmakers said the price showed how much buyers are now willing to pay for {sector} businesses .",
        "the takeover gives {buyer} a much stronger position in {country} , a market it has long wanted to grow in .",
        "some investors had hoped that a rival bidder would come forward , but none did .",
        "the two companies sell to many of the same customers , which could worry regulators .",
    ),
    history=(
        "{target} had been looking for a buyer since the start of the year .",
        "earlier this year , {target} warned that profits would be lower than expected .",
        "shares in {target} had lost much of their value over the past two years before the offer .",
        "{buyer} has spent the past ten years building up its business through a series of smaller deals .",
        "a previous attempt to sell {target} collapsed when the two sides could not agree on terms .",
    ),
    observer_roles=(
        "an analyst who follows the {sector} industry",
        "an adviser who has worked on similar deals",
        "an investor who holds shares in {target}",
    ),
    observer_quotes=(
        "it is a full price , but {buyer} needed to do something big",
        "the hard part will be bringing the two companies together",
        "i would not be surprised to see more deals like this one",
        "shareholders in {target} have every reason to be happy today",
        "the real test is whether {buyer} can keep the best people at {target}",
    ),
)

LONG_EVENT_TEMPLATES["match_result"] = dict(
    wider=(
        "the race for the title in {league} is one of the closest in years .",
        "crowds across the league have been rising this season .",
        "several clubs in {league} have changed their coach since the summer .",
        "television money has made the league wealthier than ever , but the gap between clubs has grown .",
        "injuries have hit many squads hard during a busy run of fixtures .",
        "the bottom of the table is just as tight , with several clubs fighting to stay up .",
    ),
    analysis=(
        "the win was built on a strong start , with {winner} pressing high from the first whistle .",
        "{loser} had their own openings but could not find a way past a well organised back line .",
        "the result matters at both ends of the table as the season nears its end .",
        "{winner} looked stronger in midfield and deserved the three points .",
        "for {loser} , the defeat brings fresh questions about their recent form .",
        "the second half was much more open , with both sides pushing forward in search of goals .",
    ),
    history=(
        "{winner} had lost the same fixture last season .",
        "the two clubs have a long rivalry , and meetings between them are rarely quiet .",
        "{loser} had started the season well before injuries to several key players .",
        "{winner} went into the game after a difficult week , with two players ruled out through injury .",
        "{coach} brought three new players into the side that started the previous match .",
    ),
    observer_roles=(
        "a former player who now works as a pundit",
        "a football writer who covers {league}",
        "a former coach of {loser}",
    ),
    observer_quotes=(
        "{winner} were the better side for most of the game",
        "{loser} will be worried by how easily they were opened up",
        "you could see the confidence running through {winner}",
        "{scorer_last} showed exactly why the club signed him",
        "there is still a long way to go this season",
    ),
)

LONG_EVENT_TEMPLATES["election"] = dict(
    wider=(
        "the vote was watched closely across the region as a test of public mood .",
        "parties in many countries have struggled to hold on to power as living costs rise .",
        "{issue} has moved to the top of the political agenda in recent years .",
        "trust in politicians has fallen sharply over the past ten years , polls suggest .",
        "the result is likely to change the politics of {country} for years to come .",
        "social media played a bigger role in this campaign than in any before it .",
    ),
    analysis=(
        "the result is a major shift in the politics of {region} .",
        "{winner} ran on a promise to tackle {issue} , which polls showed was the main concern of voters .",
        "the defeat is likely to lead to a change of leadership at {rival_party} .",
        "younger voters appear to have turned out in large numbers for {winner} .",
        "{winner} will need support from other parties to pass new laws .",
        "the new {office} is expected to announce the first appointments within days .",
    ),
    history=(
        "{winner} was little known outside {home_city} when the campaign began .",
        "the campaign was marked by sharp television debates between the two candidates .",
        "{rival} had been tipped to win by most commentators only a few months ago .",
        "{winner} spent the final week of the campaign touring small towns across {region} .",
        "{party} had chosen {winner} as its candidate after a close internal contest .",
    ),
    observer_roles=(
        "a political scientist who studies elections in {region}",
        "a former adviser to {rival_party}",
        "a pollster who has followed the race",
    ),
    observer_quotes=(
        "voters wanted change and {winner} offered it",
        "{rival} never found a message that worked",
        "the real work starts now for {winner}",
        "this result will be studied for years",
        "{issue} decided this election",
    ),
)

LONG_EVENT_TEMPLATES["storm"] = dict(
    wider=(
        "the region is hit by several storms every year , but few are this strong .",
        "scientists say warmer seas are making storms wetter and more intense .",
        "many coastal cities in {country} have grown quickly , putting more people in harm 's way .",
        "the government of {country} has been criticised for spending too little on flood protection .",
        "insurance companies are expected to face large claims .",
        "aid agencies warn that poorer families will find it hardest to get back on their feet .",
    ),
    analysis=(
        "the damage is worst in low-lying parts of {city} , close to the sea .",
        "experts said storms of this strength are becoming more frequent in the region .",
        "the cost of the damage is expected to run into hundreds of millions of dollars .",
        "many of the homes that were destroyed had been built quickly and cheaply .",
        "rescue teams struggled to reach towns outside {city} because roads were blocked .",
        "hospitals in {city} said they were treating dozens of people for injuries .",
    ),
    history=(
        "{storm} began as a small area of low pressure far out at sea .",
        "in the days before it struck , forecasters tracked {storm} as it gathered strength .",
        "authorities had opened emergency shelters in schools and sports halls across {city} .",
        "fishing boats were ordered back to port as the storm approached .",
        "shops in {city} ran out of water and food as residents prepared for the storm .",
    ),
    observer_roles=(
        "a climate scientist who studies storms in {country}",
        "an engineer who has worked on flood protection in {city}",
        "a volunteer with a local aid group",
    ),
    observer_quotes=(
        "we have been warning about this kind of storm for years",
        "the flood walls in {city} were never built for this",
        "people need clean water and a safe place to sleep",
        "the recovery will take months , not weeks",
        "we were lucky it was not even worse",
    ),
)

LONG_EVENT_TEMPLATES["court_ruling"] = dict(
    wider=(
        "legal fights between companies have become more frequent as competition grows .",
        "courts in {country} have handed down several large awards in recent years .",
        "companies increasingly turn to the courts instead of settling disputes privately .",
        "the legal costs of long cases can run into millions .",
        "business groups have called for quicker ways to settle commercial disputes .",
        "judges have been under pressure to clear a large backlog of cases .",
    ),
    analysis=(
        "the ruling is a major win for {plaintiff} , which had spent years pursuing the case .",
        "lawyers said the judgment could affect how similar disputes are decided in {country} .",
        "the decision is a blow to {defendant} , which had argued that the claims were without merit .",
        "legal experts said the size of the award sends a strong signal to other companies .",
        "the court rejected almost every argument put forward by {defendant} .",
        "the case drew attention because both companies are well known in {country} .",
    ),
    history=(
        "{defendant} had denied any wrongdoing throughout the case .",
        "a lower court had ruled in favour of {defendant} before the case was appealed .",
        "attempts to settle the dispute out of court failed on several occasions .",
        "hearings in the case were held over several weeks last year .",
        "{plaintiff} said the dispute had cost it customers and damaged its name .",
    ),
    observer_roles=(
        "a professor of law who has followed the case",
        "a lawyer who was not involved in the case",
        "a retired judge",
    ),
    observer_quotes=(
        "this is a very clear judgment",
        "{defendant} will find it hard to ignore this ruling",
        "companies will be reading this decision very carefully",
        "the court has set a high bar for cases like this",
        "i expect {plaintiff} to use this ruling in other disputes",
    ),
)

LONG_EVENT_TEMPLATES["product_launch"] = dict(
    wider=(
        "competition in the market for {ptypes} has never been fiercer .",
        "prices of parts have risen , squeezing the margins of makers of {ptypes} .",
        "shoppers have become more cautious with their money as prices rise .",
        "new laws on repairs and recycling are adding to costs for makers of {ptypes} .",
        "several smaller makers of {ptypes} have gone out of business in recent years .",
        "online sales now account for most of the market .",
    ),
    analysis=(
        "the {product} matters a great deal to {company} , which needs a hit after a difficult few years .",
        "analysts said the {product} would compete directly with products made by {rival} .",
        "the market for {ptypes} has slowed as customers wait more years before buying new ones .",
        "{company} is betting that better design will persuade buyers to switch .",
        "early reviews have focused on the design and the battery .",
        "the {product} is made in factories in several countries , the company said .",
    ),
    history=(
        "{company} first hinted at the {product} at a conference last year .",
        "work on the {product} took more than three years , according to people involved in the project .",
        "the last {ptype} from {company} sold poorly and was withdrawn after a few months .",
        "{company} has spent heavily on research in an effort to catch up with {rival} .",
        "pictures of an early version of the {product} appeared online in the spring .",
    ),
    observer_roles=(
        "a technology analyst who follows {company}",
        "a reviewer who tested the {product} before the launch",
        "an analyst who studies the market for {ptypes}",
    ),
    observer_quotes=(
        "the {product} is a solid product , but it is not a revolution",
        "{company} has finally built something that can compete with {rival}",
        "the price is what matters most here",
        "people will like the design",
        "the next few months will show whether customers agree",
    ),
)

LONG_EVENT_TEMPLATES["player_transfer"] = dict(
    wider=(
        "spending on transfers has risen sharply across the league this year .",
        "clubs are under pressure to strengthen their squads before the window closes .",
        "prices for good {positions} have climbed as demand has grown .",
        "many clubs now rely on scouts and data to find new players .",
        "limits on club spending have made some teams more cautious in the market .",
        "agents have become more powerful as fees have grown .",
    ),
    analysis=(
        "the signing is a statement of intent from {to_club} , who want to win the title .",
        "{from_club} will now have to find a replacement for one of their most important players .",
        "{player} adds pace and experience to a squad that has lacked both this season .",
        "the deal is one of the biggest of the transfer window .",
        "{to_coach} is expected to put {player_last} in the starting line-up straight away .",
        "the move takes {player} to a club that plays in front of much bigger crowds .",
    ),
    history=(
        "{to_club} first made an offer for {player} earlier in the window , but it was rejected .",
        "{player} had asked to leave {from_club} after falling out with the coaching staff .",
        "several other clubs were interested in {player} , but {to_club} moved first .",
        "talks between the two clubs went on for several weeks .",
        "{player} missed part of last season with a knee injury but has since recovered .",
    ),
    observer_roles=(
        "a former {position} who played in the same league",
        "a football agent who knows both clubs",
        "a sports writer who has followed {player_last} for years",
    ),
    observer_quotes=(
        "{player_last} is a big signing for {to_club}",
        "{from_club} have done very well out of this deal",
        "he will need time to settle at a new club",
        "this could be the best business of the window",
        "the fans are going to love him",
    ),
)

LONG_EVENT_TEMPLATES["scientific_discovery"] = dict(
    wider=(
        "scientists describe thousands of new species every year , most of them insects .",
        "many species are thought to disappear before they are ever described .",
        "remote areas such as {place} are under growing pressure from farming and logging .",
        "funding for work in the field has become more difficult to find .",
        "new genetic methods have made it easier to tell closely related species apart .",
        "researchers in {country} have made several important finds in recent years .",
    ),
    analysis=(
        "the discovery suggests that {place} may hold many more species that are still unknown .",
        "every new species of {animal} adds to what is known about how the group evolved , scientists say .",
        "the team used genetic tests to show that {dname} is different from its closest relatives .",
        "{dname} appears to live only in a small area , which makes it vulnerable to change .",
        "the findings could help conservation groups argue for the protection of {place} .",
        "the researchers believe {dname} is active mainly at night .",
    ),
    history=(
        "the first specimens were found by accident during a survey of the area .",
        "at first , the team thought they had found a known species .",
        "it took several more trips to {place} before the researchers were sure .",
        "local people had long known about the {animal} but it had never been studied .",
        "the specimens were sent to laboratories in {country} for tests .",
    ),
    observer_roles=(
        "a biologist who was not involved in the study",
        "an expert in {field} at a museum in {country}",
        "a conservation officer who works in {place}",
    ),
    observer_quotes=(
        "this is a very thorough piece of work",
        "it shows how little we know about {place}",
        "the next step is to find out how many are left",
        "discoveries like this show what could be lost",
        "{dname} is a remarkable find",
    ),
)

LONG_EVENT_TEMPLATES["labour_strike"] = dict(
    wider=(
        "strikes have become more frequent across {country} as living costs have risen .",
        "union membership has grown in several industries over the past two years .",
        "many employers say they are struggling with higher costs of their own .",
        "the government has been criticised for doing little to help low-paid workers .",
        "wage growth has lagged behind prices for much of the past two years .",
        "other unions are watching the dispute closely .",
    ),
    analysis=(
        "the strike is the biggest test so far for the management of {employer} .",
        "prices have risen more quickly than wages for many workers , which has fuelled the dispute .",
        "{employer} says it cannot afford the rise demanded by {union} .",
        "the walkout is likely to disrupt supplies to customers across {country} .",
        "the dispute has become a symbol of wider anger about pay in {country} .",
        "so far , both sides have refused to give ground .",
    ),
    history=(
        "talks between {union} and {employer} began several months ago .",
        "members of {union} voted in favour of strike action by a large majority .",
        "{employer} made a final offer last week , which the union rejected .",
        "workers held a series of protests outside the offices of the company before the strike .",
        "{union} had warned that a strike was likely if no deal was reached .",
    ),
    observer_roles=(
        "an expert on labour relations",
        "an economist who studies wages in {country}",
        "a former union official",
    ),
    observer_quotes=(
        "both sides will have to give something in the end",
        "this dispute is about more than pay",
        "{employer} cannot afford a long strike",
        "the workers have a lot of public support",
        "i expect the talks to start again soon",
    ),
)

LONG_EVENT_TEMPLATES["earnings"] = dict(
    wider=(
        "many companies in the {sector} industry have reported mixed results this season .",
        "higher borrowing costs have squeezed many companies .",
        "consumers have cut back on spending in several big markets .",
        "swings in currency markets have hurt companies that sell abroad .",
        "investors have become more selective about which companies they back .",
        "the outlook for the wider economy remains uncertain .",
    ),
    analysis=(
        "the results show how quickly conditions have changed in the {sector} industry .",
        "investors had been waiting for signs that the plans of {ceo} were starting to work .",
        "the figures will put pressure on rival firms that report later this month .",
        "{company} has been cutting costs and selling parts of its business that make little money .",
        "much will depend on demand for {products} in the months ahead .",
        "the company did not change its plans for new investment .",
    ),
    history=(
        "{company} had warned investors earlier in the year that trading would be difficult .",
        "a year ago , {company} announced a plan to reorganise its business .",
        "{company} hired a new chief financial officer last year .",
        "shares in {company} have moved sharply over the past year .",
        "the previous quarter brought a surprise for many analysts .",
    ),
    observer_roles=(
        "an analyst who follows {company}",
        "an investor who backs {sector} companies",
        "an economist who follows the {sector} industry",
    ),
    observer_quotes=(
        "the numbers are {dir_adj} than many people expected",
        "the question is whether this can last",
        "{company} still has a lot to prove",
        "investors will want to hear more about costs",
        "the {sector} industry is going through a difficult period",
    ),
)

# Slots that are forms of one fact: a summary may use one form when the article used another.
ALIASES = {"a_sector": "sector", "a_ptype": "ptype", "a_prev_job": "prev_job",
           "dir_verb": "dir", "dir_past": "dir", "dir_adj": "dir", "dir_comp": "dir", "dir_move": "dir"}


# --------------------------------------------------------------------------------------
# Parts of made-up names (see dca_course.data.synthnews.world.make_name)
# --------------------------------------------------------------------------------------
ONSETS = ("b", "br", "c", "ch", "d", "dr", "f", "g", "h", "j", "k", "kr", "l", "m", "n", "p",
          "r", "s", "sh", "st", "t", "tr", "v", "z", "th", "l", "m", "n", "r", "s", "t", "v")
VOWELS = ("a", "e", "i", "o", "u", "a", "e", "i", "o", "a", "ai", "ei", "ou")
CODAS = ("", "", "", "", "", "", "n", "r", "l", "s", "m", "k")
FIRST_ENDINGS = ("a", "o", "en", "ia", "el", "ik", "an", "is", "ara", "ine", "us", "")
PLACE_ENDINGS = ("", "", "ova", "ica", "mar", "heim", "ora", "ek", "and", "ul")
COUNTRY_ENDINGS = ("ia", "land", "ar", "ova", "istan", "enia", "ania")

# Verb forms the templates write: those of the summary templates (``sum_main``, ``sum_figure``, ``sum_extra``) and
# the slots they fill, then the commonest of the article templates (what a copying model brings over).  Every
# sentence of every SynthNews reference holds one and about 1% of the articles' sentences hold none
# (tests/test_ungrammatical.py), so a summary sentence without one (``dca_course.metrics.verbless_sentences``) is
# not a sentence this data writes.  Some are nouns elsewhere ("the find", "a hit"): counted as verbs, they make the
# count of verbless sentences a lower bound.
SUMMARY_VERBS = frozenset("""
acts agrees announced appears are awarded backed battered be beaten been began brings brought buying called
came can cast causing climbed confirmed costs could defeats describe discovered dominated downed drew employs
ending evacuated expanding faces fall fell find fled found founded give go got grows had has have held help
hit hoping is joined joins known land launch leads leave leaves leaving led left lifted losing lost made make
managed may moved must named offered ordered overcame paid pay paying pick play posts praised presented priced
reaching recorded represented revealed rose run runs said save saw say saying says scored secured seeing sees
sell sells set should showed shows signs slipped snap sold split started stood stop strikes struck studied
survive taken takes told took wants was weakened wear welcomed went were will win won work works wrote
""".split())
VERBS = SUMMARY_VERBS | frozenset("""
account added afford agreed am appear appeared attended beat became cannot celebrated claimed closes delivered
described did ends estimate examined expect expects face faced failed finished formed gathered gave gives goes
grow hinted hired keep lasted lasts listened live look looked makes measured meet need opened operates plans
played promised put queued ran reached reacted remain remains reported represents restore sends sent separated
shut sided sit sits spent start suffered tore totalled turn unveiled use voted want wanted watched welcome
worked
""".split())
