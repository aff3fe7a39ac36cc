// The built-in input set of the precision gate: short everyday sentences and NLI-style premise /
// hypothesis pairs (entailed, neutral and contradicted) in many languages and scripts, so the
// check exercises the tokenizer paths a multilingual model sees (Latin with diacritics, Cyrillic,
// Greek, Arabic, Hebrew, Devanagari, CJK, Hangul, Thai) and both single and pair inputs.
#include <iterator>
#include <vector>

#include "model/precision_check.h"

namespace onepass::model {
namespace {

constexpr CheckText kTexts[] = {
    {"en", "The weather was lovely, so we had lunch outside.", nullptr},
    {"en", "I am not sure this product is worth the price.", nullptr},
    {"en", "A man is playing a guitar on stage.", "A person is performing music."},
    {"en", "A man is playing a guitar on stage.", "The man is asleep at home."},
    {"en", "Two children are building a sandcastle at the beach.", "The kids are on holiday."},
    {"en", "The service was slow and the food arrived cold.", nullptr},
    {"de", "Der Zug hatte heute Morgen zwanzig Minuten Verspätung.", nullptr},
    {"de", "Eine Frau liest ein Buch im Park.", "Eine Person liest draußen."},
    {"de", "Eine Frau liest ein Buch im Park.", "Die Frau schwimmt im Meer."},
    {"fr", "Nous avons visité le musée hier après-midi.", nullptr},
    {"fr", "Un chien court après une balle dans le jardin.", "Un animal joue dehors."},
    {"fr", "Un chien court après une balle dans le jardin.", "Le chien dort sur le canapé."},
    {"es", "¿Dónde está la estación de tren más cercana?", nullptr},
    {"es", "El niño está comiendo una manzana roja.", "Un niño come fruta."},
    {"es", "El niño está comiendo una manzana roja.", "El niño tiene hambre."},
    {"it", "La riunione è stata spostata a giovedì prossimo.", nullptr},
    {"it", "Due amici bevono un caffè al bar.", "Due persone sono sedute insieme."},
    {"pt", "Eu gostei muito do filme, mas o final foi triste.", nullptr},
    {"pt", "Uma mulher está cozinhando na cozinha.", "Ninguém está cozinhando."},
    {"nl", "De fiets staat achter het huis.", nullptr},
    {"sv", "Vi ses på fredag efter jobbet.", "De träffas i helgen."},
    {"pl", "Ten telefon działa bardzo szybko i ma świetny aparat.", nullptr},
    {"cs", "Pes spí na zahradě pod stromem.", "Zvíře odpočívá venku."},
    {"tr", "Yarın hava yağmurlu olacakmış.", nullptr},
    {"tr", "Bir adam bisiklet sürüyor.", "Adam yürüyor."},
    {"fi", "Kirjasto on auki lauantaisin kymmenestä neljään.", nullptr},
    {"hu", "A macska az ablakban ül és néz kifelé.", "Egy állat az ablaknál van."},
    {"ru", "Я очень доволен покупкой, всё пришло вовремя.", nullptr},
    {"ru", "Мальчик играет в футбол во дворе.", "Ребёнок занимается спортом."},
    {"ru", "Мальчик играет в футбол во дворе.", "Мальчик спит."},
    {"uk", "Сьогодні в Києві сонячно і тепло.", nullptr},
    {"el", "Το εστιατόριο ήταν γεμάτο κόσμο.", "Δεν υπήρχε κανείς στο εστιατόριο."},
    {"ar", "الطقس جميل اليوم في المدينة.", nullptr},
    {"ar", "رجل يقرأ الجريدة في المقهى.", "شخص يجلس في مقهى."},
    {"he", "הספר הזה היה מעניין מאוד.", nullptr},
    {"fa", "من هر روز صبح چای می‌نوشم.", nullptr},
    {"hi", "मुझे यह फ़िल्म बहुत पसंद आई।", nullptr},
    {"hi", "एक लड़की पार्क में दौड़ रही है।", "लड़की बाहर है।"},
    {"bn", "আমি প্রতিদিন সকালে হাঁটতে যাই।", nullptr},
    {"zh", "这家餐厅的菜非常好吃，服务也很好。", nullptr},
    {"zh", "一个女人在厨房里做饭。", "有人在准备食物。"},
    {"zh", "一个女人在厨房里做饭。", "厨房里没有人。"},
    {"ja", "明日は雨が降るかもしれません。", nullptr},
    {"ja", "男性が自転車に乗っている。", "男性は車を運転している。"},
    {"ko", "이 책은 정말 재미있어요.", nullptr},
    {"ko", "아이들이 공원에서 놀고 있다.", "아이들이 밖에 있다."},
    {"th", "วันนี้อากาศร้อนมาก", nullptr},
    {"vi", "Tôi đã đặt vé máy bay cho tuần sau.", nullptr},
    {"id", "Toko itu buka dari pagi sampai malam.", "Toko itu tutup sepanjang hari."},
    {"sw", "Watoto wanacheza mpira uwanjani.", nullptr},
    {"en", "Refund took three weeks 😡 never ordering again!!", nullptr},
    {"mixed", "Meeting at 10:30 — bitte pünktlich sein, merci!", nullptr},
};

}  // namespace

// The texts above, then each single text paired with the next single text (cross-lingual
// pairs, mostly unrelated: the "neutral" / "contradiction" side of NLI). 100+ examples, so the 99%
// agreement bar tolerates one flip instead of demanding none.
std::span<const CheckText> builtin_check_texts() {
  static const std::vector<CheckText> all = [] {
    std::vector<CheckText> out(std::begin(kTexts), std::end(kTexts));
    std::vector<const CheckText*> singles;
    for (const auto& t : kTexts) {
      if (t.pair == nullptr) singles.push_back(&t);
    }
    for (std::size_t i = 0; i < singles.size(); ++i) {
      out.push_back(
          {singles[i]->language, singles[i]->text, singles[(i + 1) % singles.size()]->text});
    }
    for (const auto& t : kTexts) {
      if (t.pair != nullptr) out.push_back({t.language, t.pair, t.text});  // hypothesis first
    }
    return out;
  }();
  return all;
}

}  // namespace onepass::model
